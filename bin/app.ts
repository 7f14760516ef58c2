/**
 * The CDK app (`cdk.json` runs it with tsx). Context keys are listed in lib/cdk/settings.ts, e.g.
 * `npx cdk deploy -c stackName=OAuthImportDev -c removalPolicy=destroy`.
 */
import { App } from 'aws-cdk-lib';
import { defineService } from '#cdk/service-app';

defineService(new App());
