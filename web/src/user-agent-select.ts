import { UserAgent } from "../../gen/sitediag/v1/diagnostics_pb.js";

// The page's "Request as" selects: whose User-Agent a diagnostic sends (the API's user_agent).

const VALUES: Readonly<Record<string, UserAgent>> = { googlebot: UserAgent.GOOGLEBOT, bingbot: UserAgent.BINGBOT };

/** The field of a request for a select's value: nothing for browser, so the request is what it was without the choice. */
export function userAgentField(value: string): { readonly userAgent?: UserAgent } {
  const userAgent = VALUES[value];
  return userAgent === undefined ? {} : { userAgent };
}
