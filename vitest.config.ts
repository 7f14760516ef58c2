import { defineConfig } from 'vitest/config';

/**
 * Five projects, one per kind of test (see README "Tests"). Integration and e2e tests share one
 * DynamoDB Local per run, started by the global setup; each test file makes its own table.
 */
export default defineConfig({
  test: {
    reporters: ['default'],
    // Vitest's default is one worker per core minus one: a single worker on the 2-core machines the
    // suite must fit. Most test time is waiting on child processes (git, svn, hg, DynamoDB Local,
    // Chromium) and local HTTP, so two files at a time use the machine instead of queueing.
    maxWorkers: 2,
    // Locally we run Node 20; the Lambda runtime is Node 22, so the SDK's Node 20 notice is noise here.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts', 'test/support/fixture-cache-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          // One bundling `cdk synth` for the whole project (the slow part), provided as `cdkOut`.
          globalSetup: ['test/support/infra-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          // The artifacts that deploy (the worker image's root, its bundles) run as AWS runs them.
          // The image's root is built by the first test that needs it (`workerImageRoot`), while
          // the other projects' tests run.
          name: 'deployed',
          include: ['test/deployed/**/*.test.ts'],
          globalSetup: [
            'test/support/global-setup.ts',
            'test/support/infra-setup.ts',
            'test/support/fixture-cache-setup.ts',
          ],
          testTimeout: 300_000,
          hookTimeout: 900_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: [
            'test/support/global-setup.ts',
            'test/support/fixture-cache-setup.ts',
            'test/support/loopback-ca-setup.ts',
          ],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
