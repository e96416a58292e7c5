/**
 * The address bar holds the URL being looked at, `/#url=...`, so a result can
 * be shared and reloaded. Only the URL: the key never goes into the address
 * bar (nor into history or a shared link).
 */
export function urlFromHash(hash: string): string | undefined {
  const value = new URLSearchParams(hash.replace(/^#/, "")).get("url");
  return value === null || value === "" ? undefined : value;
}

export function hashOf(url: string): string {
  return `#${new URLSearchParams({ url }).toString()}`;
}
