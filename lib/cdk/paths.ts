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
