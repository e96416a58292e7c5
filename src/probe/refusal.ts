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

export interface PolicyRefusal {
  readonly rule: RefusalRule;
  /** Human sentence naming the rule: "Target 10.0.0.1 is not a public address". */
  readonly reason: string;
}
