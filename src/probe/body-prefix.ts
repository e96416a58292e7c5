import type { Readable } from "node:stream";

/**
 * The first `limit` bytes of a body, or fewer when it ends, fails or `signal`
 * ends the hop first: whatever arrived by then is the prefix. The caller
 * destroys the stream afterwards; nothing past the prefix is kept.
 */
export async function readBodyPrefix(body: Readable, limit: number, signal: AbortSignal): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  if (signal.aborted) return new Uint8Array(0);
  const stop = () => body.destroy();
  signal.addEventListener("abort", stop, { once: true });
  try {
    for await (const chunk of body as AsyncIterable<Buffer | string>) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      chunks.push(bytes.subarray(0, limit - size));
      size += Math.min(bytes.length, limit - size);
      if (size >= limit) break;
    }
  } catch {
    // A body cut short (reset, deadline) still leaves a usable prefix.
  } finally {
    signal.removeEventListener("abort", stop);
  }
  return new Uint8Array(Buffer.concat(chunks, size));
}
