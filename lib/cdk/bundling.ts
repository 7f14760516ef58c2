/**
 * How handler code is bundled, for the zip functions (`ApiFunction`, through NodejsFunction) and
 * the worker image (`worker/bundle.ts`, in its Docker build stage) alike. Plain data: the build
 * stage imports it without aws-cdk-lib.
 */

/**
 * ESM bundles still contain CommonJS dependencies that call `require`; esbuild's shim needs a real
 * `require` in scope. Aliased so that it cannot collide with a bundled module's own imports.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __houseCreateRequire } from 'node:module'; const require = __houseCreateRequire(import.meta.url);";

/** The Node.js 22 runtime (and its base image) ships SDK v3; bundling it would only grow cold starts. */
export const EXTERNAL_MODULES = ['@aws-sdk/*'];

/** Prefer packages' ESM builds. */
export const MAIN_FIELDS = ['module', 'main'];

/** Variables every function's runtime gets. */
export const RUNTIME_ENVIRONMENT = {
  // SDK v3 already keeps connections alive; kept for any dependency still on SDK v2.
  AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
  // Stack traces from the minified bundle point at the TypeScript sources.
  NODE_OPTIONS: '--enable-source-maps',
} as const;
