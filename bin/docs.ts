/**
 * `npm run docs`: regenerates the README's generated sections from their one source each: the
 * route table from `functions/shared/routes.ts`, the access-pattern table from docs/data-model.md.
 * `test/unit/docs.test.ts` fails when the README is out of date.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { renderReadme } from '#docs/readme';

const readmeFile = new URL('../README.md', import.meta.url);
const dataModelFile = new URL('../docs/data-model.md', import.meta.url);

const readme = await readFile(readmeFile, 'utf8');
const updated = renderReadme(readme, await readFile(dataModelFile, 'utf8'));
if (updated !== readme) await writeFile(readmeFile, updated);
console.log(updated === readme ? 'README.md is up to date' : 'README.md updated');
