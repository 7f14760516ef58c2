/**
 * Bundles what the worker image runs into `<out>/<name>.mjs`: the image-packaged workflow handlers
 * (`WORKFLOW_TASKS` with `packaging: 'image'`, and `SYNC_SCHEDULER`) and the Git front end's server (`git-server.mjs`),
 * with the zip functions' esbuild options (`../bundling.ts`) but nothing external. Run by the worker
 * image's build stage (`npx tsx lib/cdk/worker/bundle.ts /build/dist`) and by the infra test that
 * proves the build stage works without Docker. Imports nothing of aws-cdk-lib.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ESM_REQUIRE_BANNER, MAIN_FIELDS } from '../bundling.ts';
import { SYNC_SCHEDULER, WORKFLOW_TASKS } from '../workflow-tasks.ts';

const ROOT = new URL('../../../', import.meta.url);

/** The handlers the image holds; a function's command is `<handler>.handler`. */
export const IMAGE_HANDLERS: readonly string[] = [
  ...WORKFLOW_TASKS.filter((task) => task.packaging === 'image').map((task) => task.handler),
  SYNC_SCHEDULER.handler,
];

/**
 * The Git front end's entry point in the image, `/var/task/git-server.mjs`: an HTTP server, not a
 * Lambda handler; the ECS task runs it with `node` (`../git-frontend.ts`).
 */
export const GIT_SERVER_BUNDLE = 'git-server';

export async function bundleWorkerHandlers(outdir: string): Promise<void> {
  await build({
    entryPoints: {
      ...Object.fromEntries(
        IMAGE_HANDLERS.map((handler) => [
          handler,
          fileURLToPath(new URL(`functions/workflow/${handler}.ts`, ROOT)),
        ]),
      ),
      [GIT_SERVER_BUNDLE]: fileURLToPath(new URL('functions/git-server/main.ts', ROOT)),
    },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    mainFields: MAIN_FIELDS,
    banner: { js: ESM_REQUIRE_BANNER },
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    // Nothing left out, the AWS SDK included, as in the zip functions (`ZIP_EXTERNAL_MODULES`): the
    // image is Debian's Node.js, not a Lambda base image, so no SDK sits beside the handlers.
    tsconfig: fileURLToPath(new URL('tsconfig.json', ROOT)),
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2];
  if (outdir === undefined) throw new Error('usage: tsx lib/cdk/worker/bundle.ts <outdir>');
  await bundleWorkerHandlers(outdir);
}
