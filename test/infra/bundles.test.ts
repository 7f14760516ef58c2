import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ESM_REQUIRE_BANNER, ZIP_EXTERNAL_MODULES } from '#cdk/bundling';
import { API_ROUTES } from '#cdk/rest-api';
import { bundleWorkerHandlers, GIT_SERVER_BUNDLE, IMAGE_HANDLERS } from '#cdk/worker/bundle';
import { SYNC_SCHEDULER, WEBHOOK_DELIVERY, WORKFLOW_TASKS } from '#cdk/workflow-tasks';
import { runtimeImports } from '#test/bundle-imports';
import { loadDeployment } from '#test/deployment';

/** What a bundle imports beyond what it may leave out: Node's own modules, and `provided`. */
const missingAtRunTime = (imports: readonly string[], provided: readonly string[]): string[] =>
  imports.filter((specifier) => !isBuiltin(specifier) && !provided.includes(specifier));

describe('runtimeImports, the check below', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-imports-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds imports, dynamic imports and CommonJS requires left out of a minified bundle, and no text that looks like one', async () => {
    const file = join(dir, 'index.mjs');
    await build({
      stdin: {
        contents: [
          "import { a } from 'left-out-esm';",
          "const cjs = require('left-out-cjs'); const fs = require('node:fs');",
          "export const handler = async () => [a, cjs, fs, await import('left-out-lazy'), 'import \"not-an-import\"'];",
        ].join('\n'),
        loader: 'js',
        resolveDir: dir,
      },
      outfile: file,
      bundle: true,
      platform: 'node',
      format: 'esm',
      minify: true,
      banner: { js: ESM_REQUIRE_BANNER },
      external: ['left-out-*'],
      logLevel: 'silent',
    });
    expect(await runtimeImports(file)).toEqual([
      'left-out-cjs',
      'left-out-esm',
      'left-out-lazy',
      'node:fs',
      'node:module',
    ]);
  });
});

describe('the zip functions of the one cdk synth of the infra project', () => {
  // Every function bundled from this project's handlers: an ESM `index.mjs` in its asset.
  const bundles = new Map<string, string>();

  beforeAll(() => {
    const out = inject('cdkOut');
    for (const [, fn] of loadDeployment(out, 'OAuthImportService').ofType('AWS::Lambda::Function')) {
      const asset = fn.Metadata?.['aws:asset:path'];
      if (typeof asset !== 'string' || !existsSync(join(out, asset, 'index.mjs'))) continue;
      bundles.set(String(fn.Properties.Description), join(out, asset));
    }
  });

  it('are every route on the API, every zip-packaged workflow step and the webhook delivery function, each one ESM file with its source map that defines require', () => {
    expect([...bundles.keys()].sort()).toEqual(
      [
        ...API_ROUTES.map((route) => `${route.method} ${route.path}`),
        ...WORKFLOW_TASKS.filter((task) => task.packaging === 'zip').map(
          (task) => `Import workflow: ${task.name}`,
        ),
        WEBHOOK_DELIVERY.description,
      ].sort(),
    );
    for (const [description, dir] of bundles) {
      expect(readFileSync(join(dir, 'index.mjs'), 'utf8').startsWith(ESM_REQUIRE_BANNER), description).toBe(
        true,
      );
      expect(existsSync(join(dir, 'index.mjs.map')), description).toBe(true);
    }
  });

  it('import nothing at run time but Node built-ins: the AWS SDK is bundled, not resolved from the runtime', async () => {
    const missing: string[] = [];
    for (const [description, dir] of bundles)
      for (const specifier of missingAtRunTime(
        await runtimeImports(join(dir, 'index.mjs')),
        ZIP_EXTERNAL_MODULES,
      ))
        missing.push(`${description}: ${specifier}`);
    expect(missing).toEqual([]);
  });
});

describe('the worker image build stage (lib/cdk/worker/bundle.ts), run here without Docker', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'worker-bundle-test-'));

  beforeAll(() => bundleWorkerHandlers(outdir));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('bundles every image handler into one ESM file the command names', () => {
    expect(IMAGE_HANDLERS).toEqual([
      ...WORKFLOW_TASKS.filter((task) => task.packaging === 'image').map((task) => task.handler),
      SYNC_SCHEDULER.handler,
    ]);
    for (const handler of IMAGE_HANDLERS) {
      const bundle = readFileSync(join(outdir, `${handler}.mjs`), 'utf8');
      expect(bundle.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
      expect(bundle).toMatch(/export\s*\{[^}]*\bhandler\b/);
    }
  });

  it("bundles the Git front end's server into the one file the task's command names", () => {
    const bundle = readFileSync(join(outdir, `${GIT_SERVER_BUNDLE}.mjs`), 'utf8');
    expect(bundle.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    expect(existsSync(join(outdir, `${GIT_SERVER_BUNDLE}.mjs.map`))).toBe(true);
  });

  it('imports nothing but Node built-ins: the image is not a Lambda base image and ships no AWS SDK', async () => {
    const missing: string[] = [];
    for (const name of [...IMAGE_HANDLERS, GIT_SERVER_BUNDLE])
      for (const specifier of missingAtRunTime(await runtimeImports(join(outdir, `${name}.mjs`)), []))
        missing.push(`${name}: ${specifier}`);
    expect(missing).toEqual([]);
  });
});
