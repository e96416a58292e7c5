/**
 * What a page's markup tells search engines, read from the bounded body
 * prefix in one linear pass (html-scan.ts): its robots meta elements, its
 * `<link rel="canonical">`, its title and its first `<h1>`. Every text kept
 * is capped, so each visit costs work bounded by the text it is handed.
 */
import { asciiLower, decodeEntities, isSpace, scanHtml } from "./html-scan.js";

/** A robots directive the markup gives: the meta's name (robots, googlebot, bingbot) and its content. */
export interface RobotsMeta {
  readonly name: string;
  readonly content: string;
}

export interface PageMarkup {
  /** The robots metas whose name is one of ROBOTS_META_NAMES, in order, at most MAX_ROBOTS_METAS. */
  readonly robots: readonly RobotsMeta[];
  /** The href of the first `<link>` whose rel holds `canonical` (references decoded), or null. */
  readonly canonicalHref: string | null;
  /** The first title's text (references decoded, blanks collapsed, at most MAX_TEXT characters), or null. */
  readonly title: string | null;
  /** The first h1's text, its inner tags dropped, as the title; null when there is none. */
  readonly heading: string | null;
}

/** The meta names read: every crawler's, and the two crawlers sitediag can speak as. */
export const ROBOTS_META_NAMES: ReadonlySet<string> = new Set(["robots", "googlebot", "bingbot"]);
/** Characters of a title or heading kept: enough for any "not found" sentence. */
export const MAX_TEXT = 200;
const MAX_ROBOTS_METAS = 16;
/** A value longer than this is no keyword or URL a crawler reads (a URL is at most 2,048 characters here). */
const MAX_VALUE = 4096;

const META: ReadonlySet<string> = new Set(["name", "content"]);
const LINK: ReadonlySet<string> = new Set(["rel", "href"]);

/** The markup's signals, from a decoded body prefix. Total: any text gives a value. */
export function scanPageMarkup(html: string): PageMarkup {
  const robots: RobotsMeta[] = [];
  let canonicalHref: string | null = null;
  let title: string | null = null;
  const heading: string[] = [];
  let sawHeading = false;
  let headingLength = 0;
  let inHeading = false;
  scanHtml(html, {
    attributesOf: (tag) => (tag === "meta" ? META : tag === "link" ? LINK : null),
    start(tag, attributes) {
      if (tag === "meta" && robots.length < MAX_ROBOTS_METAS) {
        const name = keyword(attributes.get("name"));
        const content = attributes.get("content");
        if (name !== null && ROBOTS_META_NAMES.has(name) && content !== undefined && content.length <= MAX_VALUE)
          robots.push({ name, content: decodeEntities(content) });
      } else if (tag === "link" && canonicalHref === null) {
        const rel = attributes.get("rel");
        const href = attributes.get("href");
        if (rel !== undefined && href !== undefined && href.length <= MAX_VALUE && hasToken(rel, "canonical"))
          canonicalHref = decodeEntities(href).trim();
      } else if (tag === "h1" && !sawHeading) {
        sawHeading = true;
        inHeading = true;
      }
      return false;
    },
    end(tag) {
      if (tag === "h1") inHeading = false;
      return false;
    },
    text(source, from, to, rawTextOf) {
      if (rawTextOf === "title" && title === null) title = tidy(source.slice(from, Math.min(to, from + MAX_TEXT * 4)));
      else if (inHeading && rawTextOf === null && headingLength < MAX_TEXT * 4) {
        const piece = source.slice(from, Math.min(to, from + MAX_TEXT * 4 - headingLength));
        heading.push(piece);
        headingLength += piece.length;
      }
      return false;
    },
  });
  return { robots, canonicalHref, title, heading: sawHeading ? tidy(heading.join("")) : null };
}

/** A value as a keyword: references decoded, blanks trimmed, ASCII lower case; null for none or one too long to be one. */
function keyword(value: string | undefined): string | null {
  if (value === undefined || value.length > 64) return null;
  return asciiLower(decodeEntities(value).trim());
}

/** True when the space-separated list holds the token (ASCII case-insensitive), as `rel` is read. */
function hasToken(list: string, token: string): boolean {
  if (list.length > MAX_VALUE) return false;
  return asciiLower(list)
    .split(/[\t\n\f\r ]+/)
    .includes(token);
}

/** Text as a person reads it: references decoded, runs of blanks one space, at most MAX_TEXT characters. */
function tidy(text: string): string {
  const decoded = decodeEntities(text.replaceAll(/&nbsp;/gi, " ")).replaceAll("\u00a0", " ");
  let out = "";
  let blank = true;
  for (let index = 0; index < decoded.length && out.length < MAX_TEXT; index++) {
    const code = decoded.charCodeAt(index);
    if (isSpace(code)) {
      if (!blank) out += " ";
      blank = true;
    } else {
      out += decoded[index];
      blank = false;
    }
  }
  return out.trimEnd();
}
