/**
 * A local Step Functions endpoint: a loopback HTTP server speaking the AWS JSON 1.0 subset our
 * handlers use (StartExecution, StopExecution, DescribeExecution, GetExecutionHistory,
 * SendTaskSuccess, SendTaskFailure, SendTaskHeartbeat), executing the project's own `.asl.json`
 * files with aws-local-stepfunctions. Handlers keep their production `SFNClient` and only point its
 * `endpoint` here (ENV.stepFunctionsEndpoint).
 *
 * Contracts kept from AWS, because the calling code depends on them:
 * - ARNs: `arn:aws:states:<region>:<account>:stateMachine:<name>` and `...:execution:<name>:<execution>`.
 * - Errors: status 400 with `{"__type": "<ShapeName>", "message"}`, which the SDK turns into its
 *   named exception classes (ExecutionDoesNotExist, ExecutionAlreadyExists, InvalidName, TaskTimedOut, ...).
 * - StartExecution is idempotent only while the execution with that name runs and the input is the
 *   same string; any other reuse of a name is ExecutionAlreadyExists.
 * - Task resources that run (anything else is refused when the machine loads):
 *   - `${FooFunctionArn}`, a bare Lambda ARN: a task function that throws surfaces as Lambda's
 *     Node.js runtime reports it, Error = `error.name` (so Retry/Catch `ErrorEquals` match the name,
 *     not the class) and Cause = `{"errorType","errorMessage","trace"}` as a JSON string. History:
 *     LambdaFunction* events.
 *   - `arn:aws:states:::lambda:invoke` with Parameters `{FunctionName: "${FooFunctionArn}", Payload}`:
 *     the result is Lambda's Invoke response (`{ExecutedVersion, Payload, StatusCode, SdkHttpMetadata,
 *     SdkResponseMetadata}`), failures as above. History: Task* events, resource `invoke`.
 *   - `arn:aws:states:::lambda:invoke.waitForTaskToken`, same Parameters, passing `$$.Task.Token`
 *     (refused otherwise): the function gets a fresh token per task entry, and the task waits for
 *     SendTaskSuccess (its output is the result) or SendTaskFailure (its error is what Retry/Catch
 *     match), or fails with States.Timeout (TimeoutSeconds[Path]; no default) or
 *     States.HeartbeatTimeout (HeartbeatSeconds[Path]). A token whose task has ended (completed,
 *     timed out, execution stopped) answers TaskTimedOut. History: TaskScheduled, TaskStarted,
 *     TaskSubmitted, then TaskSucceeded/TaskFailed/TaskTimedOut, resource `invoke.waitForTaskToken`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiOperations, type Params } from './step-functions/api.ts';
import { ApiError } from './step-functions/api-error.ts';
import { type LoadedMachine, type LocalStateMachine, loadMachine } from './step-functions/definition.ts';
import { Executions } from './step-functions/executions.ts';

export type { LocalStateMachine, LocalTask } from './step-functions/definition.ts';

export interface StepFunctionsLocalOptions {
  machines: LocalStateMachine[];
  /** 0 (the default) picks a free port. */
  port?: number;
  region?: string;
  accountId?: string;
}

export interface StepFunctionsLocal {
  /** `http://127.0.0.1:<port>`, for `new SFNClient({ endpoint })`. */
  endpoint: string;
  stateMachineArn(name: string): string;
  /** Aborts running executions and closes the server. */
  stop(): Promise<void>;
}

export async function startStepFunctionsLocal(
  options: StepFunctionsLocalOptions,
): Promise<StepFunctionsLocal> {
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  const machines = new Map<string, LoadedMachine>();
  for (const machine of options.machines) {
    if ([...machines.values()].some((known) => known.name === machine.name)) {
      throw new Error(`State machine '${machine.name}' is defined twice`);
    }
    const loaded = await loadMachine(machine, region, accountId);
    machines.set(loaded.arn, loaded);
  }
  const executions = new Executions(region, accountId);
  const operations = apiOperations(machines, executions);

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': randomUUID(),
      });
      response.end(JSON.stringify(body));
    };
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const target = request.headers['x-amz-target'];
      const operationName = typeof target === 'string' ? target.replace(/^AWSStepFunctions\./, '') : '';
      const operation =
        request.method === 'POST' && target !== operationName ? operations[operationName] : undefined;
      if (!operation) throw new ApiError('UnknownOperationException', `Unknown operation: ${String(target)}`);
      let params: unknown;
      try {
        const body = Buffer.concat(chunks).toString('utf8');
        params = body === '' ? {} : JSON.parse(body);
      } catch {
        throw new ApiError('SerializationException', 'The request body is not valid JSON');
      }
      if (typeof params !== 'object' || params === null || Array.isArray(params)) {
        throw new ApiError('SerializationException', 'The request body must be a JSON object');
      }
      send(200, operation(params as Params));
    } catch (error) {
      if (error instanceof ApiError) send(400, { __type: error.type, message: error.message });
      else send(500, { __type: 'InternalFailure', message: String(error) });
    }
  }

  const server: Server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stateMachineArn(name) {
      const machine = [...machines.values()].find((known) => known.name === name);
      if (!machine) throw new Error(`No local state machine named '${name}'`);
      return machine.arn;
    },
    stop() {
      stopped ??= (async () => {
        await executions.stopAll();
        await new Promise<void>((resolve, reject) => {
          server.close((error) => (error ? reject(error) : resolve()));
          server.closeAllConnections();
        });
      })();
      return stopped;
    },
  };
}
