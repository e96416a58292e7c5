import type { UserAgentId } from "../../shared/user-agents.js";
import { crawlerUserAgent } from "../../shared/user-agents.js";
import type { Paint } from "./terminal-text.js";

// The report's word on whose User-Agent the requests sent (--user-agent): a
// site that redirects or refuses crawlers answered that crawler, not a browser.

/** "requested as googlebot (User-Agent: ...)", or nothing for sitediag's own. */
export function userAgentLine(id: UserAgentId, paint: Paint): string {
  const header = crawlerUserAgent(id);
  return header === undefined ? "" : `\n${paint.dim("requested as")} ${id} ${paint.dim(`(User-Agent: ${header})`)}\n`;
}
