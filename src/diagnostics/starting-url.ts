// The one bare-domain rule, alone in its file: the page's bundle takes it as it is (nothing of Node's here).

const SCHEME_WITH_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\//i;
// `example.com:8443/x` also starts with letters and a colon; a scheme is only
// what is followed by something other than a port number.
const OTHER_SCHEME = /^[a-z][a-z0-9+.-]*:(?!\d+(?:[/?#]|$))/i;

/**
 * Whether trimmed input names its scheme (`http://`, `ftp:`, `mailto:`), as
 * opposed to a bare domain. Input whose first `://` comes before any path,
 * query or fragment meant to name one, even one that is no scheme
 * (`ht!tp://bad url`): it is taken as written, and refused as no URL, never
 * guessed into `https://ht!tp://...` and looked up. A `://` later on
 * (`example.com/go?to=https://b`) is part of a bare domain's path.
 */
export function hasScheme(input: string): boolean {
  return SCHEME_WITH_AUTHORITY.test(input) || OTHER_SCHEME.test(input) || meantScheme(input);
}

function meantScheme(input: string): boolean {
  const separator = input.indexOf("://");
  if (separator === -1) return false;
  const before = input.slice(0, separator);
  return !before.includes("/") && !before.includes("?") && !before.includes("#");
}

/**
 * What a person typed, trimmed, with https:// in front when it names no
 * scheme (`example.com/path`, `example.com:8443`), and as typed otherwise.
 * redirect-check reads its input by it (spec §4.2); the CLI's check and the
 * page apply it before calling is-site-down, whose contract takes an absolute
 * URL, so a person's "example.com" is checked from https:// everywhere, and
 * the URL they are shown as checked is the one sent.
 */
export function startingUrlText(typed: string): string {
  const input = typed.trim();
  return input === "" || hasScheme(input) ? input : `https://${input}`;
}
