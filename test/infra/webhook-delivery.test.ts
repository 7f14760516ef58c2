import { Match } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_DELIVERY } from '#cdk/workflow-tasks';
import { ENV } from '#shared/config';
import { type SynthesizedService, synthService } from '#test/synth';

describe('WebhookDelivery in the service stack', () => {
  let synth: SynthesizedService;
  beforeAll(() => {
    synth = synthService();
  });
  afterAll(() => synth?.dispose());

  it('retries a failed delivery asynchronously and then sends the job to an encrypted dead-letter queue', () => {
    const fnId = synth.logicalId(synth.stack.webhookDelivery.function);
    const queueId = synth.logicalId(synth.stack.webhookDelivery.deadLetters);
    synth.template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fnId },
      MaximumRetryAttempts: WEBHOOK_DELIVERY.retries,
      MaximumEventAgeInSeconds: 6 * 3600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
    // Outside the VPC: receivers are on the internet, reached through the network guard.
    const fn = synth.template.toJSON().Resources[fnId];
    expect(fn.Properties.VpcConfig).toBeUndefined();
    expect(fn.Properties.Environment.Variables[ENV.secretsKmsKeyId]).toBeDefined();
  });

  it('lets the hooks API and the steps that end an import invoke it, and them only', () => {
    const fnId = synth.logicalId(synth.stack.webhookDelivery.function);
    const invokers = Object.entries(synth.deployment.resources)
      .filter(([, resource]) => resource.Type === 'AWS::IAM::Policy')
      .filter(([, resource]) => JSON.stringify(resource).includes('lambda:InvokeFunction'))
      .filter(
        ([, resource]) =>
          JSON.stringify(resource).includes(fnId) || JSON.stringify(resource).includes('WebhookDeliveryArn'),
      )
      .map(([id]) => id);
    const names = invokers.join(' ');
    for (const expected of [
      'HooksCreate',
      'HooksPing',
      'HooksRedeliver',
      'ImportsCancel',
      'Complete',
      'RecordFailure',
    ])
      expect(names, expected).toContain(expected);
    expect(names).not.toContain('HooksList');
    synth.template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'kms:Decrypt',
            Condition: { StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-secret' } },
          }),
        ]),
      },
    });
  });
});
