import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  type HistoryEvent,
  InvalidOutput,
  InvalidToken,
  paginateGetExecutionHistory,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StepFunctionsLocal, startStepFunctionsLocal } from '#local/step-functions';

const FIXTURE = fileURLToPath(new URL('../fixtures/callback.asl.json', import.meta.url));
const REGION = 'eu-west-1';
const ACCOUNT = '210987654321';

class TransientFailure extends Error {
  override name = 'TransientFailure';
}
class OriginAuthFailed extends Error {
  override name = 'OriginAuthFailed';
}

/** What the wait states pass the function, as the import workflow does. */
interface WaitPayload {
  owner: string;
  repo: string;
  attempt: number;
  waitingFor: string;
  taskToken: string;
}

/** Calls of the wait function by repo, the way the real function stores the token on the import. */
const waitCalls = new Map<string, WaitPayload[]>();

async function detect(input: unknown): Promise<unknown> {
  const { key } = input as { key: string };
  if (key === 'detect-fails') throw new OriginAuthFailed('origin refused the credentials');
  return { vcs: 'git' };
}

async function waitForPerson(input: unknown): Promise<unknown> {
  const payload = input as WaitPayload;
  const calls = waitCalls.get(payload.repo) ?? [];
  calls.push(payload);
  waitCalls.set(payload.repo, calls);
  if (payload.repo.startsWith('flaky') && calls.length === 1) throw new TransientFailure('table busy');
  return { stored: true };
}

async function finish(input: unknown): Promise<unknown> {
  return { done: input };
}

let local: StepFunctionsLocal;
let sfn: SFNClient;
let stateMachineArn: string;

beforeAll(async () => {
  local = await startStepFunctionsLocal({
    machines: [
      {
        name: 'Callback',
        definitionFile: FIXTURE,
        tasks: {
          DetectFunctionArn: detect,
          WaitForPersonFunctionArn: waitForPerson,
          FinishFunctionArn: finish,
        },
      },
    ],
    region: REGION,
    accountId: ACCOUNT,
  });
  sfn = new SFNClient({
    endpoint: local.endpoint,
    region: REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  stateMachineArn = local.stateMachineArn('Callback');
});

afterAll(async () => {
  sfn?.destroy();
  await local?.stop();
});

interface Input {
  repo: string;
  key?: string;
  clock?: { timeout: number; heartbeat: number };
}

async function start(input: Input): Promise<string> {
  const { executionArn } = await sfn.send(
    new StartExecutionCommand({
      stateMachineArn,
      input: JSON.stringify({ owner: 'octocat', attempt: 1, key: input.repo, ...input }),
    }),
  );
  if (!executionArn) throw new Error('StartExecution returned no executionArn');
  return executionArn;
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The payload of the `n`th call (1-based) of the wait function for `repo`. */
async function waitCall(repo: string, n: number): Promise<WaitPayload> {
  const calls = await until(
    async () => waitCalls.get(repo) ?? [],
    (list) => list.length >= n,
  );
  const call = calls[n - 1];
  if (!call) throw new Error('unreachable');
  return call;
}

function finished(executionArn: string): Promise<DescribeExecutionCommandOutput> {
  return until(
    () => sfn.send(new DescribeExecutionCommand({ executionArn })),
    (execution) => execution.status !== 'RUNNING',
  );
}

async function history(executionArn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  for await (const page of paginateGetExecutionHistory({ client: sfn }, { executionArn })) {
    events.push(...(page.events ?? []));
  }
  return events;
}

const types = (events: HistoryEvent[]) => events.map((event) => event.type);
const output = (execution: DescribeExecutionCommandOutput) => JSON.parse(execution.output ?? 'null');

function succeed(taskToken: string, result: unknown) {
  return sfn.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(result) }));
}

describe('a .waitForTaskToken task', () => {
  it('pauses, resumes with SendTaskSuccess output, and gets a new token when entered again', async () => {
    const executionArn = await start({ repo: 'loop' });

    const first = await waitCall('loop', 1);
    const paused = await until(
      () => history(executionArn),
      (events) => types(events).at(-1) === 'TaskSubmitted',
    );
    const whilePaused = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    await succeed(first.taskToken, { again: true });
    const second = await waitCall('loop', 2);
    await succeed(second.taskToken, { again: false, lfs: 'opt_in' });
    const execution = await finished(executionArn);

    expect(first).toMatchObject({ owner: 'octocat', repo: 'loop', attempt: 1, waitingFor: 'lfs_choice' });
    expect(second).toMatchObject({ attempt: 2, waitingFor: 'lfs_choice' });
    expect(first.taskToken).toMatch(/^[\w-]{40,}$/);
    expect(second.taskToken).not.toBe(first.taskToken);
    expect(whilePaused.status).toBe('RUNNING');
    expect(execution.status).toBe('SUCCEEDED');
    expect(output(execution)).toEqual({
      owner: 'octocat',
      repo: 'loop',
      attempt: 2,
      resumed: { again: false, lfs: 'opt_in' },
      finished: { done: { choice: { again: false, lfs: 'opt_in' }, attempt: 2 } },
    });
    // TimeoutSeconds 2592000 is past Node's longest timer; the task must not time out at once.
    expect(types(paused).slice(-6)).toEqual([
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSubmitted',
    ]);
    const scheduled = paused.find(
      (event) => event.taskScheduledEventDetails?.resource === 'invoke.waitForTaskToken',
    )?.taskScheduledEventDetails;
    expect(scheduled).toMatchObject({ resourceType: 'lambda', region: REGION, timeoutInSeconds: 2592000 });
    expect(JSON.parse(scheduled?.parameters ?? 'null')).toEqual({
      FunctionName: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:WaitForPersonFunction`,
      Payload: {
        owner: 'octocat',
        repo: 'loop',
        attempt: 1,
        waitingFor: 'lfs_choice',
        taskToken: first.taskToken,
      },
    });
  });

  it('writes the service integration events AWS writes, and Lambda events for a bare function ARN', async () => {
    const executionArn = await start({ repo: 'chronicle' });
    await succeed((await waitCall('chronicle', 1)).taskToken, { lfs: 'opt_out' });
    await finished(executionArn);

    const events = await history(executionArn);

    expect(types(events)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSubmitted',
      'TaskSucceeded',
      'TaskStateExited',
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'ExecutionSucceeded',
    ]);
    expect(events[3]?.taskStartedEventDetails).toEqual({ resourceType: 'lambda', resource: 'invoke' });
    const invoked = JSON.parse(events[4]?.taskSucceededEventDetails?.output ?? 'null');
    expect(invoked).toMatchObject({ ExecutedVersion: '$LATEST', Payload: { vcs: 'git' }, StatusCode: 200 });
    expect(invoked.SdkHttpMetadata.HttpStatusCode).toBe(200);
    expect(JSON.parse(events[5]?.stateExitedEventDetails?.output ?? 'null').detected).toEqual({
      vcs: 'git',
      statusCode: 200,
    });
    expect(events[11]?.taskSubmittedEventDetails).toMatchObject({
      resourceType: 'lambda',
      resource: 'invoke.waitForTaskToken',
    });
    expect(JSON.parse(events[11]?.taskSubmittedEventDetails?.output ?? 'null').Payload).toEqual({
      stored: true,
    });
    expect(events[12]?.taskSucceededEventDetails).toMatchObject({
      resource: 'invoke.waitForTaskToken',
      output: '{"lfs":"opt_out"}',
    });
  });

  it('fails with the SendTaskFailure error, which a Catch matches by name', async () => {
    const executionArn = await start({ repo: 'declined' });
    const { taskToken } = await waitCall('declined', 1);

    await sfn.send(new SendTaskFailureCommand({ taskToken, error: 'PersonDeclined', cause: 'no LFS' }));
    const execution = await finished(executionArn);

    expect(execution.status).toBe('SUCCEEDED');
    expect(output(execution)).toMatchObject({
      ending: 'declined',
      failure: { Error: 'PersonDeclined', Cause: 'no LFS' },
    });
    const failed = (await history(executionArn)).find((event) => event.type === 'TaskFailed');
    expect(failed?.taskFailedEventDetails).toEqual({
      resourceType: 'lambda',
      resource: 'invoke.waitForTaskToken',
      error: 'PersonDeclined',
      cause: 'no LFS',
    });
  });

  it('fails when its function fails; a Retry enters it again with a new token', async () => {
    const executionArn = await start({ repo: 'flaky' });

    const failedCall = await waitCall('flaky', 1);
    const retried = await waitCall('flaky', 2);
    await succeed(retried.taskToken, { lfs: 'opt_in' });
    const execution = await finished(executionArn);

    expect(execution.status).toBe('SUCCEEDED');
    expect(retried.taskToken).not.toBe(failedCall.taskToken);
    await expect(succeed(failedCall.taskToken, {})).rejects.toBeInstanceOf(TaskTimedOut);
    const events = await history(executionArn);
    const failed = events.find((event) => event.type === 'TaskFailed')?.taskFailedEventDetails;
    expect(failed?.error).toBe('TransientFailure');
    expect(JSON.parse(failed?.cause ?? 'null')).toMatchObject({
      errorType: 'TransientFailure',
      errorMessage: 'table busy',
    });
  });

  it('times out after TimeoutSecondsPath with States.Timeout, though heartbeats arrive', async () => {
    const startedAt = Date.now();
    const executionArn = await start({ repo: 'slow', clock: { timeout: 2, heartbeat: 1 } });
    const { taskToken } = await waitCall('slow', 1);

    let execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    while (execution.status === 'RUNNING') {
      await sfn.send(new SendTaskHeartbeatCommand({ taskToken })).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
      execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    }

    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2000);
    // Caught by the States.Timeout catcher, not by the States.TaskFailed one listed before it.
    expect(output(execution)).toMatchObject({ ending: 'timed-out', failure: { Error: 'States.Timeout' } });
    const events = await history(executionArn);
    expect(events.find((event) => event.type === 'TaskTimedOut')?.taskTimedOutEventDetails).toMatchObject({
      resourceType: 'lambda',
      resource: 'invoke.waitForTaskToken',
      error: 'States.Timeout',
    });
    const scheduled = events.filter((event) => event.type === 'TaskScheduled');
    expect(scheduled.map((event) => event.taskScheduledEventDetails)).toMatchObject([
      { resource: 'invoke' },
      { resource: 'invoke.waitForTaskToken', timeoutInSeconds: 2, heartbeatInSeconds: 1 },
    ]);
    // Only what the definition says: no local default for the request-response call.
    expect(scheduled[0]?.taskScheduledEventDetails).not.toHaveProperty('timeoutInSeconds');
    await expect(succeed(taskToken, {})).rejects.toBeInstanceOf(TaskTimedOut);
  });

  it('times out with States.HeartbeatTimeout without heartbeats, which States.Timeout matches', async () => {
    const startedAt = Date.now();
    const executionArn = await start({ repo: 'silent', clock: { timeout: 60, heartbeat: 1 } });

    const execution = await finished(executionArn);

    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1000);
    expect(output(execution)).toMatchObject({
      ending: 'timed-out',
      failure: { Error: 'States.HeartbeatTimeout' },
    });
    const events = await history(executionArn);
    expect(events.find((event) => event.type === 'TaskTimedOut')?.taskTimedOutEventDetails?.error).toBe(
      'States.HeartbeatTimeout',
    );
  });
});

describe('SendTaskSuccess, SendTaskFailure and SendTaskHeartbeat', () => {
  it('answer TaskTimedOut for a token whose task has completed', async () => {
    const executionArn = await start({ repo: 'reused' });
    const { taskToken } = await waitCall('reused', 1);
    await succeed(taskToken, { lfs: 'opt_in' });
    await finished(executionArn);

    const again = succeed(taskToken, { lfs: 'opt_out' });
    const failure = sfn.send(new SendTaskFailureCommand({ taskToken, error: 'Late' }));
    const heartbeat = sfn.send(new SendTaskHeartbeatCommand({ taskToken }));

    await Promise.all([
      expect(again).rejects.toBeInstanceOf(TaskTimedOut),
      expect(failure).rejects.toBeInstanceOf(TaskTimedOut),
      expect(heartbeat).rejects.toBeInstanceOf(TaskTimedOut),
    ]);
  });

  it('refuse malformed, unknown and over-long tokens, and output that is not JSON', async () => {
    const executionArn = await start({ repo: 'validation' });
    const { taskToken } = await waitCall('validation', 1);
    const unknown = Buffer.concat([Buffer.of(1), Buffer.alloc(32, 7)]).toString('base64url');

    const malformed = succeed('not-a-token', {});
    const notIssued = succeed(unknown, {});
    const empty = sfn.send(new SendTaskHeartbeatCommand({ taskToken: '' }));
    const tooLong = sfn.send(new SendTaskFailureCommand({ taskToken: 'A'.repeat(2049) }));
    const notJson = sfn.send(new SendTaskSuccessCommand({ taskToken, output: '{"lfs":' }));
    const longError = sfn.send(new SendTaskFailureCommand({ taskToken, error: 'E'.repeat(257) }));

    await Promise.all([
      expect(malformed).rejects.toBeInstanceOf(InvalidToken),
      expect(notIssued).rejects.toBeInstanceOf(TaskDoesNotExist),
      expect(empty).rejects.toMatchObject({ name: 'ValidationException' }),
      expect(tooLong).rejects.toMatchObject({ name: 'ValidationException' }),
      expect(notJson).rejects.toBeInstanceOf(InvalidOutput),
      expect(longError).rejects.toMatchObject({ name: 'ValidationException' }),
    ]);
    // None of the refused calls ended the task.
    await succeed(taskToken, { lfs: 'opt_in' });
    expect((await finished(executionArn)).status).toBe('SUCCEEDED');
  });
});

describe('StopExecution of an execution waiting for a token', () => {
  it('aborts it at once and invalidates the token', async () => {
    const executionArn = await start({ repo: 'stopped' });
    const { taskToken } = await waitCall('stopped', 1);

    await sfn.send(new StopExecutionCommand({ executionArn, error: 'ImportStopped', cause: 'cancelled' }));
    const afterStop = succeed(taskToken, { lfs: 'opt_in' });
    const heartbeat = sfn.send(new SendTaskHeartbeatCommand({ taskToken }));

    await Promise.all([
      expect(afterStop).rejects.toBeInstanceOf(TaskTimedOut),
      expect(heartbeat).rejects.toBeInstanceOf(TaskTimedOut),
    ]);
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    expect(execution).toMatchObject({ status: 'ABORTED', error: 'ImportStopped', cause: 'cancelled' });
    const events = await until(
      () => history(executionArn),
      (list) => types(list).includes('ExecutionAborted'),
    );
    expect(types(events).slice(-5)).toEqual([
      'TaskScheduled',
      'TaskStarted',
      'TaskSubmitted',
      'TaskStateAborted',
      'ExecutionAborted',
    ]);
  });
});

describe('loading Task resources', () => {
  let dir: string;
  let source: {
    States: Record<
      string,
      { Resource?: string; Parameters?: Record<string, unknown> } & Record<string, unknown>
    >;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sfn-task-tokens-'));
    source = JSON.parse(await readFile(FIXTURE, 'utf8'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts an endpoint on the fixture with one state changed; resolves to the load error. */
  async function loadWith(stateName: string, change: (state: Record<string, unknown>) => void) {
    const definition = structuredClone(source);
    const state = definition.States[stateName];
    if (!state) throw new Error(`no state ${stateName}`);
    change(state);
    const file = join(dir, `${stateName}-${Math.random().toString(36).slice(2)}.asl.json`);
    const text = JSON.stringify(definition);
    await writeFile(file, text);
    const functions = {
      DetectFunctionArn: detect,
      WaitForPersonFunctionArn: waitForPerson,
      FinishFunctionArn: finish,
    };
    const tasks = Object.fromEntries(
      Object.entries(functions).filter(([placeholder]) => text.includes(`\${${placeholder}}`)),
    );
    return startStepFunctionsLocal({ machines: [{ name: 'Changed', definitionFile: file, tasks }] });
  }

  it('refuses a .waitForTaskToken task whose Parameters never pass $$.Task.Token', async () => {
    const loading = loadWith('WaitForLfsChoice', (state) => {
      const parameters = state.Parameters as { Payload: Record<string, unknown> };
      delete parameters.Payload['taskToken.$'];
    });

    await expect(loading).rejects.toThrow(/WaitForLfsChoice.*never pass \$\$\.Task\.Token/);
  });

  it('refuses resources other than Lambda, naming the supported ones', async () => {
    const loading = loadWith('Detect', (state) => {
      state.Resource = 'arn:aws:states:::ecs:runTask.sync';
    });

    await expect(loading).rejects.toThrow(
      /Resource 'arn:aws:states:::ecs:runTask\.sync', which does not run locally; supported: .*lambda:invoke\.waitForTaskToken/,
    );
  });

  it('refuses a FunctionName that is not a task placeholder, or extra invoke Parameters', async () => {
    const dynamic = loadWith('Detect', (state) => {
      state.Parameters = { 'FunctionName.$': '$.fn', Payload: {} };
    });
    const foreign = loadWith('Detect', (state) => {
      state.Parameters = {
        FunctionName: 'arn:aws:lambda:us-east-1:123456789012:function:Other',
        Payload: {},
      };
    });
    const extra = loadWith('Detect', (state) => {
      state.Parameters = { FunctionName: `\${DetectFunctionArn}`, Payload: {}, InvocationType: 'Event' };
    });

    // All three load at once: each gets its handler now, so none rejects unobserved meanwhile.
    await Promise.all([
      expect(dynamic).rejects.toThrow(/Parameters FunctionName\.\$ are not supported locally/),
      expect(foreign).rejects.toThrow(/calls FunctionName '.*function:Other'/),
      expect(extra).rejects.toThrow(/Parameters InvocationType are not supported locally/),
    ]);
  });

  it('refuses $$.Task.Token outside a .waitForTaskToken task', async () => {
    const loading = loadWith('Finish', (state) => {
      state.Parameters = { 'token.$': '$$.Task.Token' };
    });

    await expect(loading).rejects.toThrow(/'Finish' reads \$\$\.Task\.Token/);
  });
});
