import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ACCESS_PATTERNS } from '#data/keys';
import {
  accessPatternTable,
  GENERATED_DOCS,
  GENERATED_SECTIONS,
  renderGenerated,
  routeTableMarkdown,
} from '#docs/readme';
import { ROUTES } from '#shared/routes';

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('generated documentation', () => {
  it.each(GENERATED_DOCS)(
    '%s has the current generated tables (run `npm run docs` when this fails)',
    async (path) => {
      const text = await read(path);
      expect(text).toContain('<!-- generated:');
      expect(renderGenerated(text)).toBe(text);
    },
  );

  it('carries each generated section in exactly one document', async () => {
    const texts = await Promise.all(GENERATED_DOCS.map(read));
    for (const name of GENERATED_SECTIONS)
      expect(texts.filter((text) => text.includes(`<!-- generated:${name} -->`))).toHaveLength(1);
  });

  it('lists every route once', () => {
    expect(routeTableMarkdown().split('\n')).toHaveLength(ROUTES.length + 2);
  });

  it('shows the keys the builders make, one row per access pattern', () => {
    const table = accessPatternTable();
    expect(table.split('\n')).toHaveLength(ACCESS_PATTERNS.length + 2);
    expect(table).toContain("Query `PK = USER#<login> AND begins_with(SK, 'AUTH')`, strong");
    expect(table).toContain('GetItem `TOKEN#<hash>, TOKEN`, strong');
  });

  it('names every key builder of data/keys.ts in an access pattern', async () => {
    const source = await read('functions/data/keys.ts');
    const [builders = '', patterns = ''] = source.split('export const ACCESS_PATTERNS');
    const names = [...builders.matchAll(/export const (\w+(?:Key|Partition|PREFIX))\b/g)].map(
      (m) => m[1] ?? '',
    );
    expect(names.length).toBeGreaterThan(15);
    expect(names.filter((name) => !new RegExp(`\\b${name}\\b`).test(patterns))).toEqual([]);
  });
});
