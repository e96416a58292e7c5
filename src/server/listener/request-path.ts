/** The path of a request target: up to the query or fragment, never parsed further (it may be over a limit). */
export function pathOf(target: string): string {
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}
