/**
 * The Lambda service integration: Task states with Resource `arn:aws:states:::lambda:invoke`
 * (request-response: the result is Lambda's Invoke response, the function's output in `Payload`)
 * and `arn:aws:states:::lambda:invoke.waitForTaskToken` (callback: the function gets the task token
 * in its payload, and the task ends with SendTaskSuccess/SendTaskFailure, TimeoutSeconds or a missed
 * heartbeat). The history gets the Task* events AWS writes for service integrations, as they happen,
 * so a paused execution reads as in the console.
 */
import { randomUUID } from 'node:crypto';
import {
  HEARTBEAT_PATH_PARAMETER,
  LAMBDA_MAX_TIMEOUT_SECONDS,
  type LambdaIntegration,
  type LocalTask,
  type TaskRoute,
  TIMEOUT_PATH_PARAMETER,
} from './definition.ts';
import { type Execution, MAX_PAYLOAD_BYTES, recordTaskEvent } from './history.ts';
import { abortedFailure, lambdaFailure, TaskFailure, timeoutFailure } from './task-failures.ts';
import type { TaskLimits, TaskOutcome, TaskTokens } from './task-tokens.ts';

const DATA_DETAILS = { truncated: false };

/**
 * Calls a local function as Step Functions calls a Lambda function: JSON in, JSON out (no shared
 * objects, no undefined, no class instances); a throw becomes the failure Lambda's runtime reports.
 */
export async function callFunction(run: LocalTask, input: string): Promise<string> {
  try {
    return JSON.stringify((await run(JSON.parse(input))) ?? null);
  } catch (thrown) {
    throw lambdaFailure(thrown);
  }
}

/** Lambda's Invoke response as the `lambda:invoke` integration returns it, around the function's output. */
function invokeResponse(output: string): string {
  const requestId = randomUUID();
  const headers: Record<string, string> = {
    Connection: 'keep-alive',
    'Content-Length': String(Buffer.byteLength(output)),
    'Content-Type': 'application/json',
    Date: new Date().toUTCString(),
    'X-Amz-Executed-Version': '$LATEST',
    'x-amzn-Remapped-Content-Length': '0',
    'x-amzn-RequestId': requestId,
  };
  return JSON.stringify({
    ExecutedVersion: '$LATEST',
    Payload: JSON.parse(output),
    SdkHttpMetadata: {
      AllHttpHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
      HttpHeaders: headers,
      HttpStatusCode: 200,
    },
    SdkResponseMetadata: { RequestId: requestId },
    StatusCode: 200,
  });
}

/** Replaces the execution's placeholder for `$$.Task.Token` in every string of the resolved Parameters. */
function withToken(value: unknown, sentinel: string, token: string): unknown {
  if (typeof value === 'string') return value.replaceAll(sentinel, token);
  if (Array.isArray(value)) return value.map((item) => withToken(item, sentinel, token));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, withToken(item, sentinel, token)]),
    );
  }
  return value;
}

/** A `…SecondsPath` value: AWS requires a positive integer, else the state fails with States.Runtime. */
function seconds(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new TaskFailure(
      'States.Runtime',
      `The value of ${path} must be a positive integer, not ${JSON.stringify(value)}`,
      true,
    );
  }
  return value;
}

/** The limits of this entry: static ones from the definition, path ones from the resolved Parameters. */
function limitsOf(integration: LambdaIntegration, parameters: Record<string, unknown>): TaskLimits {
  const limits: TaskLimits = {
    timeoutSeconds: integration.timeoutSeconds,
    heartbeatSeconds: integration.heartbeatSeconds,
  };
  if (TIMEOUT_PATH_PARAMETER in parameters) {
    limits.timeoutSeconds = seconds(parameters[TIMEOUT_PATH_PARAMETER], 'TimeoutSecondsPath');
  }
  if (HEARTBEAT_PATH_PARAMETER in parameters) {
    limits.heartbeatSeconds = seconds(parameters[HEARTBEAT_PATH_PARAMETER], 'HeartbeatSecondsPath');
  }
  delete parameters[TIMEOUT_PATH_PARAMETER];
  delete parameters[HEARTBEAT_PATH_PARAMETER];
  return limits;
}

export interface IntegrationTask {
  execution: Execution;
  route: TaskRoute & { integration: LambdaIntegration };
  tokens: TaskTokens;
  /** What `$$.Task.Token` resolves to in this execution's context, replaced per entry by a fresh token. */
  sentinel: string;
}

/**
 * Runs one entry of a Lambda integration Task (each Retry and each re-entry is a new one, with a new
 * token) and returns the task result, or throws the failure Retry/Catch see.
 */
export async function runLambdaIntegration(
  { execution, route, tokens, sentinel }: IntegrationTask,
  resolvedParameters: unknown,
): Promise<unknown> {
  // The library calls this handler before its event log consumer has recorded TaskStateEntered
  // (that happens in microtasks); one macrotask later it has, so the Task* events follow it.
  await new Promise((resolve) => setImmediate(resolve));
  if (execution.status !== 'RUNNING') throw abortedFailure();

  const { integration } = route;
  const callback = integration.resource === 'invoke.waitForTaskToken';
  const parameters = { ...(resolvedParameters as Record<string, unknown>) };
  const limits = limitsOf(integration, parameters);
  // A request-response call lasts as long as the function may run; a callback task has no default limit.
  const clock = callback
    ? limits
    : { ...limits, timeoutSeconds: limits.timeoutSeconds ?? LAMBDA_MAX_TIMEOUT_SECONDS };
  const pending = tokens.begin(execution.arn, clock, callback);
  const effective = (pending.token ? withToken(parameters, sentinel, pending.token) : parameters) as Record<
    string,
    unknown
  >;
  const task = { resourceType: 'lambda', resource: integration.resource };
  recordTaskEvent(execution, 'TaskScheduled', {
    ...task,
    region: execution.machine.arn.split(':')[3],
    parameters: JSON.stringify(effective),
    timeoutInSeconds: limits.timeoutSeconds,
    heartbeatInSeconds: limits.heartbeatSeconds,
  });
  recordTaskEvent(execution, 'TaskStarted', task);

  void callFunction(route.run, JSON.stringify(effective.Payload ?? {})).then(
    (output) => {
      const response = invokeResponse(output);
      if (!callback) pending.settle({ kind: 'succeeded', output: response });
      else if (pending.open) {
        recordTaskEvent(execution, 'TaskSubmitted', {
          ...task,
          output: response,
          outputDetails: DATA_DETAILS,
        });
      }
    },
    (failure: TaskFailure) => pending.settle({ kind: 'failed', error: failure.name, cause: failure.message }),
  );
  return ended(execution, task, await pending.outcome);
}

function ended(execution: Execution, task: Record<string, string>, outcome: TaskOutcome): unknown {
  switch (outcome.kind) {
    case 'succeeded':
      recordTaskEvent(execution, 'TaskSucceeded', {
        ...task,
        output: outcome.output,
        outputDetails: DATA_DETAILS,
      });
      if (Buffer.byteLength(outcome.output) > MAX_PAYLOAD_BYTES) {
        throw new TaskFailure(
          'States.DataLimitExceeded',
          'The task returned a result with a size exceeding the maximum number of bytes service limit.',
          true,
        );
      }
      return JSON.parse(outcome.output);
    case 'failed':
      recordTaskEvent(execution, 'TaskFailed', { ...task, error: outcome.error, cause: outcome.cause });
      throw new TaskFailure(outcome.error ?? '', outcome.cause ?? '');
    case 'timedOut': {
      const failure = timeoutFailure(outcome.heartbeat);
      recordTaskEvent(execution, 'TaskTimedOut', { ...task, error: failure.name });
      throw failure;
    }
    case 'aborted':
      throw abortedFailure();
  }
}
