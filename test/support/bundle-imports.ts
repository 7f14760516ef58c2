import { readFileSync } from 'node:fs';
import { build, type Plugin } from 'esbuild';

/**
 * esbuild's `require` shim in a minified ESM bundle: `var s=(r=>typeof require<"u"?require:…)`.
 * A CommonJS dependency's `require("x")` of a module left outside the bundle becomes `s("x")`.
 */
const REQUIRE_SHIM = /([\w$]+)=\(([\w$]+)=>typeof require<"u"\?require:/;

/**
 * The module specifiers a bundled ESM file still loads at run time, each once: its static imports
 * and re-exports, `import("literal")`, and `require("literal")` of CommonJS code through esbuild's
 * shim. Parsed by esbuild itself (every import left in a bundle is external, so re-bundling it with
 * each one marked external lists them all), so text inside strings and comments is not mistaken
 * for an import.
 */
export async function runtimeImports(file: string): Promise<string[]> {
  const found = new Set<string>();
  const record: Plugin = {
    name: 'record-imports',
    setup(context) {
      context.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        found.add(args.path);
        return { path: args.path, external: true };
      });
    },
  };
  await build({
    entryPoints: [file],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    logLevel: 'silent',
    plugins: [record],
  });

  const source = readFileSync(file, 'utf8');
  const shim = REQUIRE_SHIM.exec(source)?.[1];
  if (shim === undefined) {
    if (source.includes('Dynamic require of "'))
      throw new Error(`${file}: cannot find esbuild's require shim`);
  } else {
    const name = shim.replace(/\$/g, '\\$');
    for (const call of source.matchAll(
      new RegExp(`(?<![\\w$.])${name}\\(\\s*(["'\`])([^"'\`]+)\\1\\s*\\)`, 'g'),
    ))
      found.add(call[2] ?? '');
  }
  return [...found].sort();
}
