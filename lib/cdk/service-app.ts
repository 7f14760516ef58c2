import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ServiceStack } from './service-stack.ts';
import { readSettings } from './settings.ts';

/**
 * Puts the service into a CDK app: settings from context, the stack, and the cdk-nag AwsSolutions
 * checks, which run as a validation plugin during synthesis and fail it on any unacknowledged
 * error. `bin/app.ts` and the infra tests both build the app through this function.
 */
export function defineService(app: App): ServiceStack {
  const settings = readSettings(app.node);
  const stack = new ServiceStack(app, settings.stackName, { settings });
  // Acknowledgements are also written to each resource's template Metadata (`cdk_nag`) as an
  // audit trail next to the resource they excuse.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
  return stack;
}
