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
 * The only modules a zip function (`ApiFunction`) leaves out of its bundle, pinned by name: the AWS
 * SDK v3 packages this project imports that the Lambda Node.js 22 runtime provides. Source: the
 * Lambda Developer Guide ("Building Lambda functions with Node.js", "Runtime-included SDK
 * versions") documents the AWS SDK for JavaScript v3 in `nodejs22.x`, whose modular packages are its
 * service clients (`@aws-sdk/client-*`) and the DynamoDB document client (`@aws-sdk/lib-dynamodb`).
 * Never a pattern such as `@aws-sdk/*`: a package the runtime does not promise would be missing at
 * run time. `@aws-sdk/s3-request-presigner` is not promised, so it is bundled (it signs with the
 * runtime's S3 client it is given). `test/infra/bundles.test.ts` fails on any other import a
 * bundle leaves out; a package joins this list only when the runtime documents it.
 */
export const RUNTIME_PROVIDED_MODULES = [
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/client-kms',
  '@aws-sdk/client-s3',
  '@aws-sdk/client-sfn',
  '@aws-sdk/lib-dynamodb',
] as const;

/** Prefer packages' ESM builds. */
export const MAIN_FIELDS = ['module', 'main'];

/** Variables every function's runtime gets. */
export const RUNTIME_ENVIRONMENT = {
  // SDK v3 already keeps connections alive; kept for any dependency still on SDK v2.
  AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
  // Stack traces from the minified bundle point at the TypeScript sources.
  NODE_OPTIONS: '--enable-source-maps',
} as const;
