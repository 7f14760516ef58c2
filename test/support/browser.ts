import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

// The launcher lives in lib/ so that the benchmark can use it without importing test code.
export { launchBrowser } from '#local/browser';

/** Screenshots land here; CI keeps the folder as the run's artifacts. */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));

/** Saves a full-page screenshot named `<name>.png` and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = `${SCREENSHOT_DIR}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}
