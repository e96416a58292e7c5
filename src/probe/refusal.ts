/**
 * The rules of the target policy. A refusal names the rule that made it, so a
 * 400 (or a refused redirect) can always say why.
 */
export type RefusalRule =
  | "invalid_url" // not parseable as an absolute URL
  | "url_too_long" // over MAX_URL_LENGTH
  | "scheme" // not http: or https:
  | "credentials" // user:pass@ in the URL
  | "port" // outside the diagnostic's allowed ports
  | "bad_port" // a WHATWG Fetch "bad port" (SMTP, SSH, IRC ...)
  | "non_public_address" // an IP literal, or any resolved address, that is not globally reachable
  | "no_address"; // resolution gave no address at all

/** The row of the address table that refused an address (address-ranges.ts). */
export interface RefusedRange {
  readonly cidr: string;
  readonly name: string;
  /** The document defining the block: "RFC 1918". */
  readonly rfc: string;
}

export interface PolicyRefusal {
  readonly rule: RefusalRule;
  /**
   * The stable code of the row in failure-causes.ts (`input_scheme`, ...): what a
   * caller switches on, never the sentence. A redirect target refused by the same
   * rule is reported with its own `redirect_refused_*` row instead.
   */
  readonly code: string;
  /** Human sentence naming the rule: "Target 10.0.0.1 is not a public address". */
  readonly reason: string;
  /** Only for non_public_address: the block that refused the address. */
  readonly range?: RefusedRange;
}
