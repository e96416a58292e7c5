/** Answers whether the service can take diagnostic calls now (the store is reachable and accepting). */
export type ReadinessCheck = () => Promise<boolean>;

/**
 * Runs a readiness check, treating a failure to answer as "not ready": a
 * probe that throws or hangs must not be mistaken for a healthy store.
 */
export async function isReady(check: ReadinessCheck, closing: boolean, timeoutMs: number): Promise<boolean> {
  if (closing) return false;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([check().catch(() => false), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
