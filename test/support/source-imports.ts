import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's root directory. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const ALIASES: Record<string, string> = Object.fromEntries(
  Object.entries(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { imports: Record<string, string> })
      .imports,
  ).map(([alias, target]) => [alias.replace(/\*$/, ''), target.replace(/\*\.ts$/, '')]),
);

export interface Import {
  /** The project file imported, or the bare specifier of a package or Node built-in. */
  readonly to: string;
  /** Whether `to` is a file of the project. */
  readonly local: boolean;
  /** `import type { … }`, or every specifier marked `type`. */
  readonly typeOnly: boolean;
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (specifier.startsWith('.')) return resolve(dirname(from), specifier);
  for (const [alias, target] of Object.entries(ALIASES))
    if (specifier.startsWith(alias)) return join(ROOT, `${target}${specifier.slice(alias.length)}.ts`);
  return undefined; // node builtin or npm package
}

const allTypes = (clause: string): boolean => {
  const names = clause
    .replace(/^\{|\}$/g, '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return clause.startsWith('{') && names.length > 0 && names.every((name) => name.startsWith('type '));
};

/** Every import of a source file (static, dynamic and `export … from`), type-only ones marked. */
export function importsOf(file: string): Import[] {
  const source = readFileSync(file, 'utf8');
  const found: Import[] = [];
  for (const match of source.matchAll(IMPORT)) {
    const specifier = match[3] ?? match[4] ?? match[5];
    if (!specifier) continue;
    const to = resolveSpecifier(file, specifier);
    const typeOnly = match[1] !== undefined || allTypes((match[2] ?? '').trim());
    found.push(to ? { to, local: true, typeOnly } : { to: specifier, local: false, typeOnly });
  }
  return found;
}

/**
 * Every module loaded at run time when `entry` is: project files and package or built-in
 * specifiers, following imports that survive compilation (type-only ones do not).
 */
export function runtimeClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const edge of importsOf(file))
      if (!edge.typeOnly) edge.local ? pending.push(edge.to) : seen.add(edge.to);
  }
  return seen;
}
