import type { AnyDesc, DescFile } from "@bufbuild/protobuf";
import { getComments } from "@bufbuild/protoplugin";

/**
 * The leading comment of a proto element as prose. Proto comments wrap at the
 * source's line width, so lines of one paragraph are joined with spaces; blank
 * lines keep separating paragraphs.
 */
export function commentText(desc: Exclude<AnyDesc, DescFile>): string {
  const raw = getComments(desc).leading ?? "";
  return raw
    .split(/\n\s*\n/)
    .map((paragraph) =>
      paragraph
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line !== "")
        .join(" "),
    )
    .filter((paragraph) => paragraph !== "")
    .join("\n\n");
}

/** The first sentence of a comment: the operation summary shown in listings. */
export function firstSentence(text: string): string {
  const end = /[.?!](\s|$)/.exec(text);
  return end === null ? text : text.slice(0, end.index + 1);
}
