export { formatMs, formatWholeMs } from "../../src/diagnostics/timing-text.js";

/** A date as its own calendar day and time in the reader's zone, e.g. "2026-11-25 14:03". */
export function formatDate(date: Date): string {
  if (Number.isNaN(date.getTime())) return "unknown";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The host of a URL, or the text itself when it is not one. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
