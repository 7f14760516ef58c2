import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ENV } from '#shared/config';
import { SEAL_PURPOSE } from '#shared/seal-purposes';
import { SYNC_SCHEDULER_TIMEOUT_SECONDS } from '#shared/sync-scheduler';
import { grantPutImportEvents } from './import-events.ts';
import { grantPutSecurityEvents } from './security-events.ts';
import { WorkerImageFunction } from './worker-function.ts';
import type { WorkerNetwork } from './worker-network.ts';
import { SYNC_SCHEDULER } from './workflow-tasks.ts';

export interface SyncSchedulerProps {
  readonly table: ITable;
  readonly stateMachine: StateMachine;
  readonly secretsKey: IKey;
  readonly network: WorkerNetwork;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRemovalPolicy?: RemovalPolicy;
}

/**
 * Scheduled syncs of followed imports (issue 27): an EventBridge rule, `rate(1 minute)`, invokes
 * one function that queries the syncs that are due (GSI1, never a Scan), checks each origin's
 * fingerprint with `git` (so it is the worker image, in the VPC behind the same egress as the
 * workflow's steps) and starts the workflow for those with something new. `npm start` runs the
 * same handler on a timer (`lib/local/sync-timer.ts`).
 */
export class SyncScheduler extends Construct {
  public readonly function: WorkerImageFunction;
  public readonly rule: Rule;

  constructor(scope: Construct, id: string, props: SyncSchedulerProps) {
    super(scope, id);
    const fn = new WorkerImageFunction(this, 'Function', {
      handler: SYNC_SCHEDULER.handler,
      description: 'Starts the scheduled syncs of followed imports that are due',
      environment: {
        ...props.environment,
        [ENV.importStateMachineArn]: props.stateMachine.stateMachineArn,
        [ENV.secretsKmsKeyId]: props.secretsKey.keyArn,
      },
      network: props.network.worker,
      // It lists refs, not history: a small function, done well within the minute between ticks.
      memorySize: 1024,
      timeout: Duration.seconds(SYNC_SCHEDULER_TIMEOUT_SECONDS),
      ...(props.logRemovalPolicy === undefined ? {} : { logRemovalPolicy: props.logRemovalPolicy }),
    });
    fn.bindTable(props.table, 'RW');
    props.stateMachine.grantStartExecution(fn);
    // A sync it starts is a status change: its event is published from here.
    grantPutImportEvents(fn);
    grantPutSecurityEvents(fn);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [props.secretsKey.keyArn],
        conditions: { StringEquals: { 'kms:EncryptionContext:purpose': SEAL_PURPOSE.importCredentials } },
      }),
    );
    this.function = fn;
    this.rule = new Rule(this, 'Rule', {
      description: 'Once a minute: start the syncs of followed imports that are due',
      schedule: Schedule.rate(Duration.minutes(1)),
      // A tick that fails is not retried: the next one, a minute later, finds the same due syncs.
      targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
    });
  }
}
