import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { defineService } from '#cdk/service-app';
import type { ServiceStack } from '#cdk/service-stack';
import { type Deployment, deployedLogicalId, loadDeployment } from './deployment.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context?: Record<string, unknown>;
};

export interface SynthOptions {
  /** Context on top of cdk.json's, as `cdk synth -c key=value` would give it. */
  readonly context?: Record<string, unknown>;
}

export interface SynthesizedService {
  readonly app: App;
  readonly stack: ServiceStack;
  /** The parent stack's template only. */
  readonly template: Template;
  /** The parent and every nested stack (the route functions), references followed across them. */
  readonly deployment: Deployment;
  /** The cloud assembly directory. */
  readonly outdir: string;
  /** The logical ID a construct's CloudFormation resource got, as `deployment.resources` keys it. */
  logicalId(construct: IConstruct): string;
  /** Deletes the cloud assembly. */
  dispose(): void;
}

/**
 * Builds and synthesizes the app exactly as `bin/app.ts` does (same `defineService`, cdk.json's
 * context, cdk-nag included), in memory, into a temporary directory. Synthesis throws if cdk-nag
 * reports an unacknowledged error. Call it once per test file, in beforeAll.
 */
export function synthService(options: SynthOptions = {}): SynthesizedService {
  const outdir = mkdtempSync(join(tmpdir(), 'infra-synth-'));
  const app = new App({
    outdir,
    context: {
      ...cdkJson.context,
      // No bundling: assets point at the unbundled sources, which is all a template assertion
      // needs. The bundles are checked in the one `cdk synth` of test/support/infra-setup.ts.
      'aws:cdk:bundling-stacks': [],
      ...options.context,
    },
  });
  const stack = defineService(app);
  const assembly = app.synth();
  const template = Template.fromJSON(assembly.getStackByName(stack.stackName).template);
  return {
    app,
    stack,
    template,
    deployment: loadDeployment(outdir, stack.stackName),
    outdir,
    logicalId: deployedLogicalId,
    dispose() {
      rmSync(outdir, { recursive: true, force: true });
    },
  };
}
