import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '#shared/config';
import { SEAL_PURPOSE } from '#shared/seal-purposes';
import { ApiFunction } from './api-function.ts';
import { workflowHandlerEntry } from './paths.ts';
import { WEBHOOK_DELIVERY } from './workflow-tasks.ts';

export interface WebhookDeliveryProps {
  readonly table: ITable;
  /** Opens hook secrets to sign (encryption context purpose `webhook-secret`). */
  readonly secretsKey: IKey;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRemovalPolicy: RemovalPolicy;
}

/**
 * Webhook deliveries off the request path (issue 28): one zip function outside the VPC (it posts
 * to receivers on the internet through the network guard), invoked asynchronously by the API and
 * by the workflow's Complete and RecordFailure steps. Lambda's own event queue holds the jobs:
 * a delivery the receiver did not take is retried `WEBHOOK_DELIVERY.retries` times with Lambda's
 * backoff, and a job that fails every attempt (or waits six hours) lands in the dead-letter queue.
 */
export class WebhookDelivery extends Construct {
  public readonly function: ApiFunction;
  public readonly deadLetters: Queue;
  private readonly secretsKey: IKey;

  constructor(scope: Construct, id: string, props: WebhookDeliveryProps) {
    super(scope, id);
    this.secretsKey = props.secretsKey;
    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetters).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself the dead-letter destination of the webhook deliveries.',
    });
    const fn = new ApiFunction(this, 'Function', {
      entry: workflowHandlerEntry(WEBHOOK_DELIVERY.handler),
      description: WEBHOOK_DELIVERY.description,
      environment: { ...props.environment, [ENV.secretsKmsKeyId]: props.secretsKey.keyArn },
      // The receiver has 10 s; recording the attempt and the hook's last response fit in the rest.
      timeout: Duration.seconds(30),
      logRemovalPolicy: props.logRemovalPolicy,
    });
    fn.bindTable(props.table, 'RW');
    fn.addToRolePolicy(hookSecretStatement(props.secretsKey, 'kms:Decrypt'));
    fn.configureAsyncInvoke({
      retryAttempts: WEBHOOK_DELIVERY.retries,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(this.deadLetters),
    });
    this.function = fn;
  }

  /**
   * What a function that raises events or manages hooks needs (routes with `uses: ['webhooks']`,
   * the workflow's ending steps): the delivery function's ARN, invoking it, and sealing hook
   * secrets. A function in a nested stack passes both as its stack sees them (parameters).
   */
  grantUse(
    fn: LambdaFunction,
    seenFrom: { readonly functionArn: string; readonly secretsKey: IKey } = {
      functionArn: this.function.functionArn,
      secretsKey: this.secretsKey,
    },
  ): void {
    fn.addEnvironment(ENV.webhookDeliveryFunction, seenFrom.functionArn);
    fn.addEnvironment(ENV.secretsKmsKeyId, seenFrom.secretsKey.keyArn);
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [seenFrom.functionArn] }),
    );
    fn.addToRolePolicy(hookSecretStatement(seenFrom.secretsKey, 'kms:Encrypt'));
  }
}

/** KMS on the secrets key, only for values sealed as hook secrets (encryption context). */
function hookSecretStatement(secretsKey: IKey, action: 'kms:Encrypt' | 'kms:Decrypt'): PolicyStatement {
  return new PolicyStatement({
    actions: [action],
    resources: [secretsKey.keyArn],
    conditions: { StringEquals: { 'kms:EncryptionContext:purpose': SEAL_PURPOSE.webhookSecret } },
  });
}
