import type { HopTimings } from "./hop-types.js";
import type { HopTrace } from "./hop-trace.js";

/**
 * A hop's phases, read from its trace when it ends (answered or failed), in
 * tenths of a millisecond. Every boundary (DNS done, dial started,
 * connected, TLS done, first byte, head read, end) is rounded once, as an
 * offset from the hop's start, and each phase is the difference of two
 * rounded boundaries: so the phases that happened and `other` (what lies
 * between them: screening, the step from DNS to the dial, writing a request
 * on a kept connection) add up to totalMs exactly, in every view that shows
 * them unrounded further. The phase a failed hop failed in runs to its end:
 * a server that accepted and never answered has a waiting phase as long as
 * its timeout.
 */
export function hopTimings(trace: HopTrace, endedAt: number, headAt: number | null): HopTimings {
  const total = tenths(trace, endedAt);
  // A boundary that came after the end (never, on one clock) is read as the end.
  const at = (time: number) => Math.min(tenths(trace, time), total);
  const phase = (from: number | null, to: number | null): number | null =>
    from === null || to === null ? null : Math.max(0, at(to) - at(from));
  const failedIn = headAt === null ? trace.phase : null;

  const dns = phase(trace.startedAt, trace.dnsDoneAt ?? (failedIn === "dns" ? endedAt : null));
  // A reused connection has no dial and no handshake of its own.
  const connect = trace.connectionReused
    ? null
    : phase(trace.connectStartedAt, trace.tcpConnectedAt ?? (failedIn === "connect" ? endedAt : null));
  const tls = trace.connectionReused ? null : phase(trace.tcpConnectedAt, trace.tlsDoneAt ?? (failedIn === "tls" ? endedAt : null));
  // Waiting starts when the connection is ready (or the request went out on a kept one) and ends at the first byte.
  const ready = trace.connectionReused
    ? trace.requestSentAt
    : (trace.tlsDoneAt ?? (trace.connectStartedAt === null ? null : trace.tcpConnectedAt));
  const firstByte = trace.firstByteAt ?? headAt;
  const waiting = phase(ready, firstByte ?? (failedIn === "http" ? endedAt : null));
  const receiving = firstByte === null ? null : phase(firstByte, headAt ?? endedAt);
  const named = [dns, connect, tls, waiting, receiving].reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
  return {
    totalMs: total / 10,
    dnsMs: ms(dns),
    connectMs: ms(connect),
    tlsMs: ms(tls),
    waitingMs: ms(waiting),
    receivingMs: ms(receiving),
    otherMs: Math.max(0, total - named) / 10,
    firstByteMs: ms(phase(trace.requestSentAt, firstByte)),
  };
}

function tenths(trace: HopTrace, time: number): number {
  return Math.max(0, Math.round((time - trace.startedAt) * 10));
}

function ms(tenthsOf: number | null): number | null {
  return tenthsOf === null ? null : tenthsOf / 10;
}
