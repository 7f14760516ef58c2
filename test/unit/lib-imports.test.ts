import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file));
}

describe('lib/ and bin/', () => {
  it('never import test code (tests may import lib, not the other way round)', () => {
    const files = [...sources('lib'), ...sources('bin')];
    expect(files.length).toBeGreaterThan(10);
    const offenders = files.filter((file) =>
      /(?:from|import)\s*\(?\s*['"](?:#test\/|(?:\.\.\/)+test\/)/.test(
        readFileSync(join(ROOT, file), 'utf8'),
      ),
    );
    expect(offenders.map((file) => relative(ROOT, join(ROOT, file)))).toEqual([]);
  });
});
