import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Import, importsOf, ROOT } from '#test/source-imports';

/*
 * The dependency direction, checked on every import of the project's own code (static, dynamic
 * and `export … from`): entry points → services → domain, services → data → domain types, and
 * everything may lean on `shared`, which leans on nothing. The layout table of docs/development.md
 * describes the same rules; this test keeps the two true.
 */

type Layer =
  | 'domain'
  | 'shared'
  | 'data'
  | 'services'
  | 'vcs'
  | 'workflow'
  | 'http'
  | 'git-server'
  | 'cdk'
  | 'local'
  | 'bench'
  | 'docs'
  | 'smoke'
  | 'bin'
  | 'test';

/** The layer a project file belongs to, by folder. */
function layerOf(file: string): Layer | undefined {
  const path = relative(ROOT, file);
  const [top, second] = path.split('/');
  if (top === 'functions' || top === 'lib') return second as Layer;
  if (top === 'bin' || top === 'test') return top;
  return undefined;
}

/** What each layer may import (besides itself, node builtins and npm packages). */
const ALLOWED: Record<Exclude<Layer, 'test'>, readonly Layer[]> = {
  domain: [],
  shared: [],
  data: ['domain', 'shared'],
  services: ['domain', 'data', 'shared', 'vcs'],
  vcs: ['domain', 'shared'],
  workflow: ['services', 'domain', 'shared'],
  http: ['services', 'domain', 'shared'],
  'git-server': ['services', 'domain', 'shared'],
  // Infrastructure code reads the table's shape and the route table; nothing else of the functions.
  cdk: ['shared', 'data'],
  // The local stack starts the Git front end from its own entry point code, as its container does.
  local: ['shared', 'data', 'cdk', 'git-server'],
  bench: ['local', 'cdk', 'shared', 'data', 'domain', 'services'],
  docs: ['shared', 'data'],
  // The post-deploy check names the stack's resources as the CDK code builds them.
  smoke: ['cdk', 'shared'],
  bin: ['cdk', 'local', 'bench', 'docs', 'smoke', 'services', 'domain', 'shared'],
};

/** Files of another layer that a layer may import, when the layer itself may not (exact paths). */
const ALLOWED_FILES: Partial<Record<Layer, readonly string[]>> = {
  // Keys (and the profile cache) fold logins with the domain's one ASCII case fold, not a copy of it;
  // an application's state item is keyed by the tag its tokens carry, by the domain's one rule.
  data: ['functions/domain/ascii-case.ts', 'functions/domain/app-tag.ts'],
  cdk: ['functions/data/table.ts'],
  local: ['functions/data/table.ts'],
  docs: ['functions/data/table.ts', 'functions/data/keys.ts'],
};

/** Why an import from `file` breaks the direction, or undefined when it is fine. */
function violation(
  file: string,
  edge: Omit<Import, 'local'> & { readonly local?: boolean },
): string | undefined {
  if (edge.local === false) return undefined;
  const from = layerOf(file);
  const to = layerOf(edge.to);
  if (!from || !to || from === 'test' || from === to) return undefined;
  const target = relative(ROOT, edge.to);
  const line = `${relative(ROOT, file)} → ${target}`;
  if ((ALLOWED_FILES[from] ?? []).includes(target)) return undefined;
  if (from === 'data' && to === 'domain' && !edge.typeOnly)
    return `${line} (data may import domain types only)`;
  if (ALLOWED[from].includes(to)) return undefined;
  return `${line} (${from} may not import ${to})`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

const FILES = ['functions', 'lib', 'bin'].flatMap(sourceFiles);

describe('dependency direction', () => {
  it('reads the imports of every source file, type-only ones included', () => {
    const authenticate = FILES.find((file) => file.endsWith('functions/services/authenticate.ts'));
    expect(authenticate).toBeDefined();
    const targets = importsOf(authenticate as string).map((edge) => relative(ROOT, edge.to));
    expect(targets.some((target) => target.startsWith('functions/data/'))).toBe(true);
    expect(FILES.length).toBeGreaterThan(50);
  });

  it('refuses imports that point back up, and data using domain rules', () => {
    const at = (path: string) => join(ROOT, path);
    const rule = { to: at('functions/domain/scopes.ts'), typeOnly: false };
    expect(
      violation(at('functions/domain/tokens.ts'), { to: at('functions/data/keys.ts'), typeOnly: false }),
    ).toBeDefined();
    expect(
      violation(at('functions/http/grants/get.ts'), { to: at('functions/data/apps.ts'), typeOnly: true }),
    ).toBeDefined();
    expect(
      violation(at('functions/shared/html.ts'), { to: at('functions/services/sign-in.ts'), typeOnly: false }),
    ).toBeDefined();
    expect(violation(at('functions/data/apps.ts'), rule)).toBeDefined();
    expect(violation(at('functions/data/apps.ts'), { ...rule, typeOnly: true })).toBeUndefined();
    expect(
      violation(at('lib/bench/oauth.ts'), { to: at('test/support/browser.ts'), typeOnly: false }),
    ).toBeDefined();
    expect(
      violation(at('functions/http/grants/get.ts'), {
        to: at('functions/services/grants.ts'),
        typeOnly: false,
      }),
    ).toBeUndefined();
  });

  it('holds for every import in functions/, lib/ and bin/', () => {
    const found = FILES.flatMap((file) => importsOf(file).flatMap((edge) => violation(file, edge) ?? []));
    expect(found.sort()).toEqual([]);
  });
});
