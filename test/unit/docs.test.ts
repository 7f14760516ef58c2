import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { renderReadme, routeTableMarkdown } from '#docs/readme';
import { ROUTES } from '#shared/routes';

describe('README', () => {
  it('has the current route and access-pattern tables (run `npm run docs` when this fails)', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const dataModel = await readFile(new URL('../../docs/data-model.md', import.meta.url), 'utf8');
    expect(renderReadme(readme, dataModel)).toBe(readme);
  });

  it('lists every route once', () => {
    expect(routeTableMarkdown().split('\n')).toHaveLength(ROUTES.length + 2);
  });
});
