import { fileURLToPath } from 'node:url';

/**
 * Every file path the CDK code needs, resolved from this file's own location so that `cdk synth`,
 * the tests and any other caller get the same paths whatever their working directory.
 */
const root = new URL('../../', import.meta.url);

export const PROJECT_ROOT = fileURLToPath(root).replace(/\/$/, '');
export const LOCK_FILE = fileURLToPath(new URL('package-lock.json', root));
export const TSCONFIG_FILE = fileURLToPath(new URL('tsconfig.json', root));

/** The module of an HTTP route's handler: `functions/http/<route.handler>.ts`. */
export function httpHandlerEntry(handler: string): string {
  return fileURLToPath(new URL(`functions/http/${handler}.ts`, root));
}

/** The import worker image (lib/cdk/worker-function.ts) and its build context's filter. */
export const WORKER_DOCKERFILE = fileURLToPath(new URL('lib/cdk/worker/Dockerfile', root));
export const WORKER_DOCKERIGNORE = fileURLToPath(new URL('lib/cdk/worker/Dockerfile.dockerignore', root));

/** The import workflow's definition (CDK deploys it; the local runner runs it). */
export const IMPORT_ASL_FILE = fileURLToPath(new URL('statemachines/import.asl.json', root));

/** The module of a workflow task's handler: `functions/workflow/<handler>.ts`. */
export function workflowHandlerEntry(handler: string): string {
  return fileURLToPath(new URL(`functions/workflow/${handler}.ts`, root));
}
