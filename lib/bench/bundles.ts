import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { App, NestedStack } from 'aws-cdk-lib';
import { RUNTIME_ENVIRONMENT } from '#cdk/bundling';
import { API_ROUTES } from '#cdk/rest-api';
import { defineService } from '#cdk/service-app';
import { routeId } from '#shared/routes';
import { median } from './measure.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Inside the project, so that the bundles' external SDK imports resolve to node_modules as the runtime's would. */
const LOAD_DIR = join(ROOT, '.data/bench/bundles');

/** Issue 19's target: every route bundle loads within this (median of the fresh processes). */
export const BUNDLE_LOAD_TARGET_MS = 60;

/** The context `cdk synth` gives the app: cdk.json's feature flags, which change what is built. */
function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

export interface BundleMeasurement {
  readonly route: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  /** Median of `import()` of the bundle in a fresh `node` process. */
  readonly loadMs: number;
}

/**
 * Milliseconds a fresh Node process takes to `import()` the module (what a cold start pays), with
 * the options the function's runtime gets (`--enable-source-maps`: the source map is read too).
 */
function loadTime(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(`file://${file}`)}); console.log(performance.now() - t);`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: {
      ...process.env,
      NODE_OPTIONS: RUNTIME_ENVIRONMENT.NODE_OPTIONS,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  });
  return Number(output.trim());
}

/**
 * Synthesizes the real app (bundling with esbuild exactly as `cdk synth` does), then measures each
 * route function's deployed bundle: size, gzip size, and module-load time over `runs` fresh processes.
 */
export function measureBundles(runs: number): BundleMeasurement[] {
  const outdir = mkdtempSync(join(tmpdir(), 'bench-synth-'));
  try {
    // The CLI reads cdk.json's context and turns on asset and construct-path metadata; an
    // in-memory App must be given both, or it builds (or refuses) something other than what deploys.
    const app = new App({
      outdir,
      context: {
        ...cdkJsonContext(),
        'aws:cdk:enable-asset-metadata': true,
        'aws:cdk:enable-path-metadata': true,
      },
    });
    const stack = defineService(app);
    const assembly = app.synth();
    type Template = { Resources: Record<string, { Type: string; Metadata?: Record<string, string> }> };
    // Route functions live in the nested stacks of their group (lib/cdk/route-groups.ts).
    const templates: Template[] = [
      assembly.getStackByName(stack.stackName).template as Template,
      ...app.node
        .findAll()
        .filter(NestedStack.isNestedStack)
        .map((nested) => JSON.parse(readFileSync(join(outdir, nested.templateFile), 'utf8')) as Template),
    ];
    const functions = templates
      .flatMap((template) => Object.values(template.Resources))
      .filter((resource) => resource.Type === 'AWS::Lambda::Function');
    return API_ROUTES.map((route) => {
      const id = routeId(route);
      const fn = functions.find((candidate) => candidate.Metadata?.['aws:cdk:path']?.includes(`/${id}/`));
      const asset = fn?.Metadata?.['aws:asset:path'];
      if (!asset) throw new Error(`no bundled function found for ${route.handler}`);
      const bundle = join(outdir, asset, 'index.mjs');
      const target = join(LOAD_DIR, id, 'index.mjs');
      mkdirSync(join(LOAD_DIR, id), { recursive: true });
      copyFileSync(bundle, target);
      copyFileSync(`${bundle}.map`, `${target}.map`);
      const loads = Array.from({ length: runs }, () => loadTime(target));
      return {
        route: `${route.method} ${route.path}`,
        bytes: statSync(bundle).size,
        gzipBytes: gzipSync(readFileSync(bundle)).length,
        loadMs: median(loads),
      };
    });
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
