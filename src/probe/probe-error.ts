/**
 * A failure the probe names itself while speaking HTTP (a head too large, a
 * malformed head, two Locations that disagree). Its `code` is a CAUSES key:
 * the failure's stage and sentence come from that table, never from here.
 */
export class ProbeProtocolError extends Error {
  constructor(
    readonly code: string,
    /** What exactly was wrong, for logs and tests; people read the CAUSES sentence. */
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
    this.name = "ProbeProtocolError";
  }
}
