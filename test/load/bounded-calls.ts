/** Runs `count` calls with at most `concurrency` at once, stopping early (and failing) past `deadlineMs`. */
export async function bounded<T>(count: number, concurrency: number, deadlineMs: number, call: (index: number) => Promise<T>): Promise<T[]> {
  const stopAt = Date.now() + deadlineMs;
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      if (Date.now() > stopAt) throw new Error(`load did not finish ${count} calls within ${deadlineMs} ms (${results.length} done)`);
      const index = next++;
      results.push(await call(index));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}
