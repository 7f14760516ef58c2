import { readFileSync } from 'node:fs';
import {
  ArnFormat,
  CfnOutput,
  type CfnResource,
  Duration,
  NestedStack,
  type RemovalPolicy,
  Stack,
  Token,
  Validations,
} from 'aws-cdk-lib';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ENV } from '#shared/config';
import { SEAL_PURPOSE } from '#shared/seal-purposes';
import { ApiFunction } from './api-function.ts';
import { grantPutImportEvents } from './import-events.ts';
import type { LfsObjects } from './lfs-objects.ts';
import { fromParent } from './parent-parameters.ts';
import { workflowHandlerEntry } from './paths.ts';
import { grantPutSecurityEvents } from './security-events.ts';
import { MAX_IMPORT_CHUNK_SECONDS, WORKER_TIMEOUT_SECONDS } from './settings.ts';
import { WorkerImageFunction } from './worker-function.ts';
import type { WorkerNetwork } from './worker-network.ts';
import { placeholderOf, placeholdersIn, WORKFLOW_TASKS, type WorkflowTaskName } from './workflow-tasks.ts';

export interface ImportWorkflowProps {
  /** Absolute path of the ASL file (build it with `paths.ts`); JSONPath, `${<Task>FunctionArn}` placeholders. */
  readonly definitionFile: string;
  /** The state machine's name, also the middle of its executions' ARNs. */
  readonly stateMachineName: string;
  readonly table: ITable;
  /** Opens the import's sealed origin credentials (encryption context purpose `import-credentials`). */
  readonly secretsKey: IKey;
  readonly network: WorkerNetwork;
  /** Where the Push step puts Git LFS objects. */
  readonly lfsObjects: LfsObjects;
  /** Configuration variables every function gets (`functionEnvironment(settings)`). */
  readonly environment: Readonly<Record<string, string>>;
  /** A long step's time budget per invocation; below the workers' timeout. */
  readonly importChunkSeconds: number;
  readonly largeFileBytes: number;
  /** Reserved concurrency of each Git step (`importWorkerConcurrency`); undefined: none reserved. */
  readonly workerConcurrency?: number | undefined;
  /** For the functions' and the state machine's log groups. */
  readonly logRemovalPolicy: RemovalPolicy;
}

/**
 * Memory of the Git steps (CPU grows with it): detection only lists refs; the others index,
 * rewrite and pack history. Every Git step may run Lambda's full 15 minutes, above the chunk budget.
 */
const WORKER_MEMORY: Partial<Record<WorkflowTaskName, number>> = { Detect: 1024 };
const LONG_STEP_MEMORY = 3008;
/** The one step that stores Git LFS objects (`services/import-worker.ts` `push`). */
const LFS_STEP: WorkflowTaskName = 'Push';
/** The one step that starts executions (`services/import-continuation.ts`). */
const CONTINUATION_STEP: WorkflowTaskName = 'ContinueInNewExecution';
/** Steps where an import of a batch settles and the batch's next imports start. */
const BATCH_SETTLE_STEPS: readonly WorkflowTaskName[] = ['Complete', 'RecordFailure', 'WaitForPerson'];

/** The nested stack of the Task functions: its logical id, also the middle of its console name. */
export const TASKS_STACK_ID = 'ImportTasks';

/**
 * The source import workflow: `statemachines/import.asl.json` deployed unchanged, one function per
 * Task (`WORKFLOW_TASKS`): the Git steps as container-image functions in the VPC with the file
 * system mounted, the table-only steps as ordinary bundled functions. The state machine's role is
 * written here, statement by statement: a state machine from an ASL file gets no automatic grants
 * for the resources its states name.
 *
 * The functions (each with its role, policy and log group) live in a nested stack,
 * `ImportTasks`, as the routes' functions do (`RouteFunctions`): the parent keeps room under
 * CloudFormation's 500 resources. What crosses in is named (`TableName`, `SecretsKeyArn`,
 * `LfsBucketName`; the network by CDK's own references), what crosses out is one output per Task,
 * `<Task>Arn`, which the definition's substitutions and the machine's role name.
 */
export class ImportWorkflow extends Construct {
  public readonly stateMachine: StateMachine;
  /** The Task functions by state name. */
  public readonly functions: ReadonlyMap<WorkflowTaskName, LambdaFunction>;
  /** What each `${placeholder}` of the definition was replaced with (a function ARN). */
  public readonly substitutions: Readonly<Record<string, string>>;
  /** `arn:…:execution:<name>:*`: the executions `grantControl` lets a function stop and describe. */
  public readonly executionArns: string;
  private readonly secretsKey: IKey;
  private readonly stateMachineName: string;

  constructor(scope: Construct, id: string, props: ImportWorkflowProps) {
    super(scope, id);
    if (props.importChunkSeconds > MAX_IMPORT_CHUNK_SECONDS) {
      throw new Error(`importChunkSeconds must be at most ${MAX_IMPORT_CHUNK_SECONDS}`);
    }
    this.secretsKey = props.secretsKey;
    this.stateMachineName = props.stateMachineName;
    const definition = readFileSync(props.definitionFile, 'utf8');

    const home = new NestedStack(this, TASKS_STACK_ID, {
      description: 'Source import workflow (Task functions)',
    });
    (home.nestedStackResource as CfnResource).overrideLogicalId(TASKS_STACK_ID);
    const table = Table.fromTableAttributes(home, 'Table', {
      tableName: fromParent(home, 'TableName', props.table.tableName, 'The service table'),
      grantIndexPermissions: true,
    });
    const secretsKey = Key.fromKeyArn(
      home,
      'SecretsKey',
      fromParent(home, 'SecretsKeyArn', props.secretsKey.keyArn, 'Opens sealed import credentials'),
    );
    const lfsBucket = Bucket.fromBucketName(
      home,
      'LfsBucket',
      fromParent(home, 'LfsBucketName', props.lfsObjects.bucket.bucketName, 'The Git LFS objects bucket'),
    );

    const functions = new Map<WorkflowTaskName, LambdaFunction>();
    /** Each function's ARN as this (the parent) stack sees it: the nested stack's output. */
    const arnsInParent = new Map<WorkflowTaskName, string>();
    for (const task of WORKFLOW_TASKS) {
      const description = `Import workflow: ${task.name}`;
      if (task.packaging === 'image') {
        const fn = new WorkerImageFunction(home, task.name, {
          handler: task.handler,
          description,
          environment: {
            ...props.environment,
            [ENV.importChunkSeconds]: String(props.importChunkSeconds),
            [ENV.largeFileBytes]: String(props.largeFileBytes),
            [ENV.secretsKmsKeyId]: secretsKey.keyArn,
          },
          network: props.network.worker,
          memorySize: WORKER_MEMORY[task.name] ?? LONG_STEP_MEMORY,
          timeout: Duration.seconds(WORKER_TIMEOUT_SECONDS),
          logRemovalPolicy: props.logRemovalPolicy,
          reservedConcurrentExecutions: props.workerConcurrency,
        });
        fn.bindTable(table, 'RW');
        fn.addToRolePolicy(credentialsStatement(secretsKey, 'kms:Decrypt'));
        if (task.name === LFS_STEP) props.lfsObjects.grantObjects(fn, lfsBucket);
        grantPutImportEvents(fn);
        grantPutSecurityEvents(fn);
        functions.set(task.name, fn);
      } else {
        const fn = new ApiFunction(home, task.name, {
          entry: workflowHandlerEntry(task.handler),
          description,
          environment: props.environment,
          timeout: Duration.seconds(30),
          logRemovalPolicy: props.logRemovalPolicy,
        });
        fn.bindTable(table, 'RW');
        grantPutImportEvents(fn);
        grantPutSecurityEvents(fn);
        functions.set(task.name, fn);
      }
      const fn = functions.get(task.name) as LambdaFunction;
      new CfnOutput(home, `${task.name}Arn`, { description, value: fn.functionArn });
      arnsInParent.set(
        task.name,
        Token.asString((home.nestedStackResource as CfnResource).getAtt(`Outputs.${task.name}Arn`)),
      );
    }
    this.functions = functions;

    const substitutions: Record<string, string> = {};
    for (const [name, arn] of arnsInParent) substitutions[placeholderOf(name)] = arn;
    const expected = Object.keys(substitutions).sort();
    const used = placeholdersIn(definition).sort();
    if (JSON.stringify(used) !== JSON.stringify(expected)) {
      throw new Error(
        `${props.definitionFile} must use exactly the placeholders ${expected.join(', ')}; it uses ${used.join(', ')}`,
      );
    }
    this.substitutions = substitutions;

    const logs = new LogGroup(this, 'Logs', {
      // The vended-logs prefix keeps CloudWatch's resource policy small however many machines log.
      logGroupName: `/aws/vendedlogs/states/${props.stateMachineName}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy,
    });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName: props.stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromFile(props.definitionFile),
      definitionSubstitutions: substitutions,
      // Every state transition, without inputs and outputs: the story of each import in the logs,
      // its data (owner, repository, cursors) in the table and the console only.
      logs: { destination: logs, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });
    const role = this.stateMachine.role;
    for (const arn of arnsInParent.values()) {
      role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [arn, `${arn}:*`] }),
      );
    }

    const stack = Stack.of(this);
    this.executionArns = stack.formatArn({
      service: 'states',
      resource: 'execution',
      resourceName: `${props.stateMachineName}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.grantContinuation(functions.get(CONTINUATION_STEP), props.stateMachineName);
    // The settle points start a batch's next queued imports (`services/import-batches.ts`).
    for (const step of BATCH_SETTLE_STEPS)
      this.grantContinuation(functions.get(step), props.stateMachineName);
    this.acknowledgeRoleWildcards();
  }

  /**
   * What an API function that drives imports needs (routes with `uses: ['import-workflow']`):
   * the machine's ARN, starting executions of this machine, stopping and describing its executions,
   * resuming a waiting one by task token, sealing origin credentials with the secrets key, and
   * publishing the import events of the status changes it writes.
   * A function in another (nested) stack passes the machine's ARN and the key as its stack sees
   * them (parameters); by default they are this construct's own.
   */
  grantControl(
    fn: ApiFunction,
    seenFrom: { readonly stateMachineArn: string; readonly secretsKey: IKey } = {
      stateMachineArn: this.stateMachine.stateMachineArn,
      secretsKey: this.secretsKey,
    },
  ): void {
    fn.addEnvironment(ENV.importStateMachineArn, seenFrom.stateMachineArn);
    fn.addEnvironment(ENV.secretsKmsKeyId, seenFrom.secretsKey.keyArn);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:StartExecution'],
        resources: [seenFrom.stateMachineArn],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:StopExecution', 'states:DescribeExecution'],
        resources: [this.executionArns],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'],
        resources: ['*'],
      }),
    );
    fn.addToRolePolicy(credentialsStatement(seenFrom.secretsKey, 'kms:Encrypt'));
    grantPutImportEvents(fn);
    const validations = Validations.of(fn.executionRole);
    validations.acknowledge({
      id: `AwsSolutions-IAM5[Resource::${this.executionArnsForNag()}]`,
      reason:
        'Executions are created per import attempt with names not known in advance; the wildcard is limited to the executions of this one state machine (stop a cancelled import, describe an attempt).',
    });
  }

  /** Lets a route's function open sealed import credentials (the `import-credentials` capability). */
  grantOpeningCredentials(fn: ApiFunction, secretsKey: IKey = this.secretsKey): void {
    fn.addToRolePolicy(credentialsStatement(secretsKey, 'kms:Decrypt'));
  }

  /**
   * The step that starts an attempt's next part (`import-continuation.ts`) starts executions of
   * this machine and stops one it started for an attempt that ended meanwhile; the settle points
   * start a batch's next imports (and stop one whose start could not be recorded). The machine's ARN is
   * built from its name: the machine's own ARN would make the function and the machine (whose
   * definition names the function) depend on each other.
   */
  private grantContinuation(fn: LambdaFunction | undefined, stateMachineName: string): void {
    if (!(fn instanceof ApiFunction)) return;
    const machineArn = Stack.of(fn).formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    fn.addEnvironment(ENV.importStateMachineArn, machineArn);
    fn.addToRolePolicy(new PolicyStatement({ actions: ['states:StartExecution'], resources: [machineArn] }));
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ['states:StopExecution'], resources: [this.executionArns] }),
    );
    Validations.of(fn.executionRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${this.executionArnsForNag()}]`,
      reason:
        'An attempt continues in executions named per attempt and part, not known in advance; the wildcard is limited to the executions of this one state machine (stop a part started for a cancelled attempt).',
    });
  }

  /** The execution ARN pattern as cdk-nag prints it in a finding id. */
  private executionArnsForNag(): string {
    return `arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${this.stateMachineName}:*`;
  }

  private acknowledgeRoleWildcards(): void {
    const validations = Validations.of(this.stateMachine.role);
    validations.acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'CloudWatch Logs delivery for Step Functions (logs:CreateLogDelivery and friends) and X-Ray tracing (xray:PutTraceSegments, GetSamplingRules, ...) support no resource-level permissions; AWS documents both with Resource "*".',
    });
    for (const task of this.functions.keys()) {
      validations.acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${TASKS_STACK_ID}.Outputs.${task}Arn>:*]`,
        reason:
          'The versions and aliases of this one Task function, which Step Functions may invoke by qualified ARN; every other Lambda function stays out of reach.',
      });
    }
  }
}

/** KMS on the secrets key, only for values sealed as import credentials (encryption context). */
function credentialsStatement(secretsKey: IKey, action: 'kms:Encrypt' | 'kms:Decrypt'): PolicyStatement {
  return new PolicyStatement({
    actions: [action],
    resources: [secretsKey.keyArn],
    conditions: { StringEquals: { 'kms:EncryptionContext:purpose': SEAL_PURPOSE.importCredentials } },
  });
}
