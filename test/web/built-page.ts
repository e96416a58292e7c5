import { buildPage } from "../../scripts/build-page.js";

/**
 * The slow project's global setup: the page is built into dist/web once,
 * before any of its files runs. The browser tests each start `sitediag serve`,
 * which serves dist/web; when every file built it in its own beforeAll, two
 * files running at once could empty dist/web (the build starts by removing
 * it) while the other's service was reading it, and that service served no page.
 */
export default async function buildPageOnce(): Promise<void> {
  await buildPage();
}
