/**
 * `npm run docs`: regenerates the generated sections of docs/api.md, docs/importing.md and
 * docs/data-model.md from their one source each: the route table from `functions/shared/routes.ts`,
 * the state machine from `statemachines/import.asl.json`, the access-pattern table from the key
 * builders (`ACCESS_PATTERNS` in `functions/data/keys.ts`). `test/unit/docs.test.ts` fails
 * when a document is out of date.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { GENERATED_DOCS, renderGenerated } from '#docs/readme';

for (const path of GENERATED_DOCS) {
  const file = new URL(`../${path}`, import.meta.url);
  const text = await readFile(file, 'utf8');
  const updated = renderGenerated(text);
  if (updated !== text) await writeFile(file, updated);
  console.log(updated === text ? `${path} is up to date` : `${path} updated`);
}
