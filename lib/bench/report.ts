import { readFile, writeFile } from 'node:fs/promises';

const FILE = new URL('../../docs/benchmarks.md', import.meta.url);

/** Replaces the `<!-- bench:NAME -->` section of docs/benchmarks.md with fresh results. */
export async function writeSection(name: string, markdown: string): Promise<void> {
  const text = await readFile(FILE, 'utf8');
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/benchmarks.md lacks ${start} ... ${end}`);
  await writeFile(FILE, `${text.slice(0, from + start.length)}\n${markdown.trim()}\n${text.slice(to)}`);
}
