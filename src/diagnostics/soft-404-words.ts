/**
 * Does a page's title or first heading say "not found"? The words search
 * engines' soft-404 detection reacts to, as a short documented list in ten
 * languages (docs/redirect-check.md#search-signals). Meant never to fire on a
 * normal page: the text is cut at the separators titles use ("Page not found |
 * Example", "404 - Not Found"), interjections and status codes are dropped at
 * either end of each part ("Oops!", "Error 404"), and what is left must be one
 * of the phrases whole, not merely contain it ("Why bugs are not found" is a
 * normal page).
 */

/** Whole phrases, lower case, NFC, punctuation read as a space. */
export const SOFT_404_PHRASES: ReadonlySet<string> = new Set([
  // English
  "not found",
  "page not found",
  "file not found",
  "document not found",
  "page cannot be found",
  "page can't be found",
  "the page cannot be found",
  "that page can't be found",
  "this page can't be found",
  "page could not be found",
  "the page could not be found",
  "page does not exist",
  "page doesn't exist",
  "the page does not exist",
  "this page does not exist",
  "this page doesn't exist",
  "page no longer exists",
  "this page no longer exists",
  "page gone",
  // German
  "nicht gefunden",
  "seite nicht gefunden",
  "die seite wurde nicht gefunden",
  "seite existiert nicht",
  "die seite existiert nicht",
  // French
  "introuvable",
  "page introuvable",
  "page non trouvée",
  "page inexistante",
  "cette page n'existe pas",
  "la page n'existe pas",
  // Spanish
  "no encontrada",
  "no encontrado",
  "página no encontrada",
  "pagina no encontrada",
  "la página no existe",
  "esta página no existe",
  // Italian
  "non trovata",
  "non trovato",
  "pagina non trovata",
  "pagina non esistente",
  "la pagina non esiste",
  // Portuguese
  "não encontrada",
  "não encontrado",
  "página não encontrada",
  "pagina nao encontrada",
  // Dutch
  "niet gevonden",
  "pagina niet gevonden",
  "deze pagina bestaat niet",
  // Polish
  "nie znaleziono",
  "nie znaleziono strony",
  "strona nie istnieje",
  // Russian
  "не найдено",
  "не найдена",
  "страница не найдена",
  // Japanese, Chinese, Korean
  "ページが見つかりません",
  "ページが見つかりませんでした",
  "お探しのページは見つかりませんでした",
  "页面不存在",
  "页面未找到",
  "找不到页面",
  "找不到网页",
  "頁面不存在",
  "找不到網頁",
  "페이지를 찾을 수 없습니다",
]);

/** Words dropped at either end of a part: interjections and the words that go with a status code. */
const FRAME_WORDS: ReadonlySet<string> = new Set([
  "oops",
  "whoops",
  "sorry",
  "uh",
  "oh",
  "error",
  "erreur",
  "fehler",
  "errore",
  "erro",
  "fout",
  "błąd",
  "ошибка",
  "http",
  "page",
  "seite",
]);
/** Status codes that say it alone ("404", "Error 404"); "gone" counts only beside 410. */
const STATUS_WORDS: ReadonlySet<string> = new Set(["404", "410"]);
/** Title separators: a part on either side is read alone. */
const SEPARATORS = /[|·»«:–—]|\s-\s/;

/** The phrase a title or heading says "not found" with, as read (normalised), or null; `text` is capped by the caller (MAX_TEXT). */
export function soft404Phrase(text: string): string | null {
  for (const part of text.normalize("NFC").toLowerCase().replaceAll("’", "'").split(SEPARATORS)) {
    const words = part
      .replace(/[^\p{L}\p{N}']+/gu, " ")
      .trim()
      .split(" ")
      .filter((word) => word !== "");
    if (words.length === 0) continue;
    let status: string | null = null;
    let first = 0;
    let last = words.length;
    const frame = (word: string | undefined): boolean => {
      if (word === undefined) return false;
      if (STATUS_WORDS.has(word)) {
        status ??= word;
        return true;
      }
      return FRAME_WORDS.has(word);
    };
    // "page" is a frame word only when a phrase does not start with it: try the whole part first.
    const whole = words.join(" ");
    if (SOFT_404_PHRASES.has(whole)) return whole;
    while (first < last && frame(words[first])) first++;
    while (last > first && frame(words[last - 1])) last--;
    const core = words.slice(first, last).join(" ");
    if (SOFT_404_PHRASES.has(core)) return core;
    if (status !== null && (core === "" || (status === "410" && core === "gone"))) return words.join(" ");
  }
  return null;
}
