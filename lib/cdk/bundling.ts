/**
 * How handler code is bundled, for the zip functions (`ApiFunction`, through NodejsFunction) and
 * the worker image (`worker/bundle.ts`, in its Docker build stage) alike, except for what each
 * leaves out. Plain data: the build stage imports it without aws-cdk-lib.
 */

/**
 * ESM bundles still contain CommonJS dependencies that call `require`; esbuild's shim needs a real
 * `require` in scope. Aliased so that it cannot collide with a bundled module's own imports.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __houseCreateRequire } from 'node:module'; const require = __houseCreateRequire(import.meta.url);";

/**
 * What a zip function (`ApiFunction`) leaves out of its bundle: nothing. The Lambda Node.js 22
 * runtime ships the AWS SDK v3, but resolving it there costs every cold start more than it saves:
 * the SDK's packages are hundreds of small files that Node finds, reads and links one by one,
 * while esbuild tree-shakes the commands a function uses into its one minified file. Measured with
 * `npm run bench -- bundles` (docs/benchmarks.md, "Lambda bundles"): `GET /user` loaded in 85 ms
 * with the runtime's SDK and 38 ms with it bundled, on the same machine in the same minute. The
 * function also no longer depends on which SDK version the runtime happens to carry.
 * `test/infra/bundles.test.ts` fails on any import a bundle leaves out but Node's own modules.
 */
export const ZIP_EXTERNAL_MODULES: readonly string[] = [];

/** Prefer packages' ESM builds. */
export const MAIN_FIELDS = ['module', 'main'];

/** Variables every function's runtime gets. */
export const RUNTIME_ENVIRONMENT = {
  // SDK v3 already keeps connections alive; kept for any dependency still on SDK v2.
  AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
  // Stack traces from the minified bundle point at the TypeScript sources.
  NODE_OPTIONS: '--enable-source-maps',
} as const;
