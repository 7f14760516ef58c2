import { fileURLToPath } from 'node:url';
import {
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  type HistoryEvent,
  InvalidArn,
  InvalidExecutionInput,
  InvalidName,
  paginateGetExecutionHistory,
  SFNClient,
  StartExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StepFunctionsLocal, startStepFunctionsLocal } from '#local/step-functions';

const FIXTURE = fileURLToPath(new URL('../fixtures/two-step.asl.json', import.meta.url));
/** A Lambda task in a loop: seven history events a round, until `$.rounds.n` reaches `$.until`. */
const ROUNDS = fileURLToPath(new URL('../fixtures/rounds.asl.json', import.meta.url));
const REGION = 'eu-west-1';
const ACCOUNT = '210987654321';

class OriginAuthFailed extends Error {
  override name = 'OriginAuthFailed';
}
class TransientFailure extends Error {
  override name = 'TransientFailure';
}

/** What the fixture's first task reads; `key` separates the tests' call counts. */
interface FirstInput {
  key: string;
  failWith?: 'OriginAuthFailed' | 'TransientFailure';
  failTimes?: number;
  route?: string;
  waitSeconds?: number;
}

const firstCalls = new Map<string, number>();
const secondInputs: { greeting: string; executionName: string }[] = [];

async function first(input: unknown): Promise<unknown> {
  const { key, failWith, failTimes = 0, route, waitSeconds } = input as FirstInput;
  const calls = (firstCalls.get(key) ?? 0) + 1;
  firstCalls.set(key, calls);
  if (failWith && calls <= failTimes) {
    throw failWith === 'OriginAuthFailed'
      ? new OriginAuthFailed(`origin refused the credentials for ${key}`)
      : new TransientFailure('origin busy');
  }
  return { greeting: `hello ${key}`, route, waitSeconds };
}

async function second(input: unknown): Promise<unknown> {
  const received = input as { greeting: string; executionName: string };
  secondInputs.push(received);
  if (received.greeting === 'hello boom') throw new Error('second task broke');
  return { shout: received.greeting.toUpperCase() };
}

let local: StepFunctionsLocal;
let sfn: SFNClient;
let stateMachineArn: string;

beforeAll(async () => {
  local = await startStepFunctionsLocal({
    machines: [
      {
        name: 'TwoStep',
        definitionFile: FIXTURE,
        tasks: { FirstFunctionArn: first, SecondFunctionArn: second },
      },
      {
        name: 'Rounds',
        definitionFile: ROUNDS,
        tasks: {
          RoundFunctionArn: async (input) => ({
            n: ((input as { rounds?: { n: number } }).rounds?.n ?? 0) + 1,
          }),
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
  stateMachineArn = local.stateMachineArn('TwoStep');
});

afterAll(async () => {
  sfn?.destroy();
  await local?.stop();
});

async function start(input: FirstInput, name?: string): Promise<string> {
  const { executionArn } = await sfn.send(
    new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }),
  );
  if (!executionArn) throw new Error('StartExecution returned no executionArn');
  return executionArn;
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function finished(executionArn: string): Promise<DescribeExecutionCommandOutput> {
  return until(
    () => sfn.send(new DescribeExecutionCommand({ executionArn })),
    (execution) => execution.status !== 'RUNNING',
  );
}

async function history(
  executionArn: string,
  maxResults?: number,
  reverseOrder?: boolean,
): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  for await (const page of paginateGetExecutionHistory(
    { client: sfn },
    { executionArn, maxResults, reverseOrder },
  )) {
    events.push(...(page.events ?? []));
  }
  return events;
}

const types = (events: HistoryEvent[]) => events.map((event) => event.type);

describe('startStepFunctionsLocal', () => {
  it('listens on the loopback interface and names state machines with real ARNs', () => {
    expect(local.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(stateMachineArn).toBe(`arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:TwoStep`);
  });

  it('rejects a definition with an unsubstituted placeholder', async () => {
    const starting = startStepFunctionsLocal({
      machines: [{ name: 'Incomplete', definitionFile: FIXTURE, tasks: { FirstFunctionArn: first } }],
    });

    await expect(starting).rejects.toThrow(/no value for \$\{SecondFunctionArn\}/);
  });
});

describe('StartExecution and DescribeExecution', () => {
  it('runs both tasks and succeeds with the merged output', async () => {
    const executionArn = await start({ key: 'plain' }, 'plain-run');

    const execution = await finished(executionArn);

    expect(executionArn).toBe(`arn:aws:states:${REGION}:${ACCOUNT}:execution:TwoStep:plain-run`);
    expect(execution).toMatchObject({
      status: 'SUCCEEDED',
      name: 'plain-run',
      stateMachineArn,
      input: '{"key":"plain"}',
    });
    expect(execution.startDate).toBeInstanceOf(Date);
    expect(execution.stopDate?.getTime()).toBeGreaterThanOrEqual(
      execution.startDate?.getTime() ?? Number.NaN,
    );
    expect(JSON.parse(execution.output ?? 'null')).toEqual({
      key: 'plain',
      first: { greeting: 'hello plain' },
      second: { shout: 'HELLO PLAIN' },
    });
    expect(secondInputs).toContainEqual({ greeting: 'hello plain', executionName: 'plain-run' });
  });

  it('follows the Choice rule that skips the second task', async () => {
    const executionArn = await start({ key: 'skipper', route: 'skip' });

    const execution = await finished(executionArn);

    expect(execution.status).toBe('SUCCEEDED');
    expect(JSON.parse(execution.output ?? 'null')).toEqual({
      key: 'skipper',
      route: 'skip',
      first: { greeting: 'hello skipper', route: 'skip' },
    });
    expect(secondInputs.map((input) => input.greeting)).not.toContain('hello skipper');
  });

  it('routes a task error to the Catch that names it, without retrying', async () => {
    const executionArn = await start({ key: 'denied', failWith: 'OriginAuthFailed', failTimes: 1 });

    const execution = await finished(executionArn);

    expect(execution).toMatchObject({ status: 'FAILED', error: 'ImportFailed' });
    expect(JSON.parse(execution.cause ?? 'null')).toMatchObject({
      errorType: 'OriginAuthFailed',
      errorMessage: 'origin refused the credentials for denied',
    });
    expect(firstCalls.get('denied')).toBe(1);
  });

  it('retries a task error that a Retry names, then goes on', async () => {
    const executionArn = await start({ key: 'flaky', failWith: 'TransientFailure', failTimes: 1 });

    const execution = await finished(executionArn);

    expect(execution.status).toBe('SUCCEEDED');
    expect(firstCalls.get('flaky')).toBe(2);
    const lambdaEvents = types(await history(executionArn)).filter((type) =>
      type?.startsWith('LambdaFunction'),
    );
    expect(lambdaEvents.slice(0, 6)).toEqual([
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionFailed',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
    ]);
  });

  it('fails the execution with the name of an uncaught task error and Lambda’s cause', async () => {
    const executionArn = await start({ key: 'boom' });

    const execution = await finished(executionArn);

    expect(execution).toMatchObject({ status: 'FAILED', error: 'Error' });
    expect(JSON.parse(execution.cause ?? 'null')).toMatchObject({
      errorType: 'Error',
      errorMessage: 'second task broke',
    });
  });

  it('returns the running execution again for the same name and input', async () => {
    const input = { key: 'twice', waitSeconds: 30 };
    const executionArn = await start(input, 'twice');
    const original = await sfn.send(new DescribeExecutionCommand({ executionArn }));

    const again = await sfn.send(
      new StartExecutionCommand({ stateMachineArn, name: 'twice', input: JSON.stringify(input) }),
    );

    expect(again.executionArn).toBe(executionArn);
    expect(again.startDate).toEqual(original.startDate);
    expect(firstCalls.get('twice')).toBe(1);
    await sfn.send(new StopExecutionCommand({ executionArn }));
  });

  it('refuses a reused name with other input, or once the execution has ended', async () => {
    const executionArn = await start({ key: 'reused', waitSeconds: 30 }, 'reused');

    const otherInput = start({ key: 'reused', waitSeconds: 1 }, 'reused');
    await expect(otherInput).rejects.toBeInstanceOf(ExecutionAlreadyExists);
    await sfn.send(new StopExecutionCommand({ executionArn }));
    const afterStop = start({ key: 'reused', waitSeconds: 30 }, 'reused');
    await expect(afterStop).rejects.toBeInstanceOf(ExecutionAlreadyExists);
  });

  it.each(['has space', 'tab\there', 'a/b', 'colon:name', 'brace{', 'star*', 'x'.repeat(81)])(
    'refuses the execution name %j',
    async (name) => {
      await expect(start({ key: 'invalid-name' }, name)).rejects.toBeInstanceOf(InvalidName);
    },
  );

  it('accepts 80 characters and non-ASCII letters in a name', async () => {
    const names = ['n'.repeat(80), 'import-ü_1.0'];

    const arns = await Promise.all(names.map((name) => start({ key: `valid-${name}`, route: 'skip' }, name)));

    expect(arns.map((arn) => arn.split(':').at(-1))).toEqual(names);
  });

  it('refuses input that is not JSON and unknown or malformed ARNs', async () => {
    const notJson = sfn.send(new StartExecutionCommand({ stateMachineArn, input: '{"key":' }));
    const unknownMachine = sfn.send(
      new StartExecutionCommand({ stateMachineArn: `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:Nope` }),
    );
    const unknownExecution = sfn.send(
      new DescribeExecutionCommand({
        executionArn: `arn:aws:states:${REGION}:${ACCOUNT}:execution:TwoStep:nope`,
      }),
    );
    const malformed = sfn.send(new DescribeExecutionCommand({ executionArn: 'not-an-arn' }));

    await expect(notJson).rejects.toBeInstanceOf(InvalidExecutionInput);
    await expect(unknownMachine).rejects.toBeInstanceOf(StateMachineDoesNotExist);
    await expect(unknownExecution).rejects.toBeInstanceOf(ExecutionDoesNotExist);
    await expect(unknownExecution).rejects.toMatchObject({ name: 'ExecutionDoesNotExist', $fault: 'client' });
    await expect(malformed).rejects.toBeInstanceOf(InvalidArn);
  });
});

describe('StopExecution', () => {
  it('aborts an execution that is waiting, with the given error and cause', async () => {
    const executionArn = await start({ key: 'stopped', waitSeconds: 30 });
    await until(
      () => history(executionArn),
      (events) => types(events).includes('WaitStateEntered'),
    );

    const { stopDate } = await sfn.send(
      new StopExecutionCommand({ executionArn, error: 'UserCancelled', cause: 'import cancelled' }),
    );

    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    expect(execution).toMatchObject({ status: 'ABORTED', error: 'UserCancelled', cause: 'import cancelled' });
    expect(execution.stopDate).toEqual(stopDate);
    const events = await until(
      () => history(executionArn),
      (list) => types(list).includes('ExecutionAborted'),
    );
    expect(types(events).slice(-2)).toEqual(['WaitStateAborted', 'ExecutionAborted']);
    expect(events.at(-1)?.executionAbortedEventDetails).toEqual({
      error: 'UserCancelled',
      cause: 'import cancelled',
    });
    expect(secondInputs.map((input) => input.greeting)).not.toContain('hello stopped');
  });
});

describe('GetExecutionHistory', () => {
  it('lists the events in order, with Step Functions event types and details', async () => {
    const executionArn = await start({ key: 'chronicle', waitSeconds: 0 });
    await finished(executionArn);

    const events = await history(executionArn);

    expect(types(events)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'WaitStateEntered',
      'WaitStateExited',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'ExecutionSucceeded',
    ]);
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1));
    const times = events.map((event) => event.timestamp?.getTime() ?? Number.NaN);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(events[1]?.stateEnteredEventDetails).toMatchObject({
      name: 'First',
      input: '{"key":"chronicle","waitSeconds":0}',
    });
    expect(events[2]?.lambdaFunctionScheduledEventDetails).toMatchObject({
      resource: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:FirstFunction`,
    });
    expect(JSON.parse(events[13]?.lambdaFunctionSucceededEventDetails?.output ?? 'null')).toEqual({
      shout: 'HELLO CHRONICLE',
    });
  });

  it('pages with maxResults and lists newest first with reverseOrder', async () => {
    const executionArn = await start({ key: 'paged', route: 'skip' });
    await finished(executionArn);
    const all = await history(executionArn);

    const paged = await history(executionArn, 3);
    const reversed = await history(executionArn, undefined, true);

    expect(paged).toEqual(all);
    expect(reversed).toEqual([...all].reverse());
    expect(types(all)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'ChoiceStateEntered',
      'ChoiceStateExited',
      'SucceedStateEntered',
      'SucceedStateExited',
      'ExecutionSucceeded',
    ]);
  });

  it('records a caught task failure and the Fail state', async () => {
    const executionArn = await start({ key: 'denied-history', failWith: 'OriginAuthFailed', failTimes: 1 });
    await finished(executionArn);

    const events = await history(executionArn);

    expect(types(events)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionFailed',
      'TaskStateExited',
      'FailStateEntered',
      'ExecutionFailed',
    ]);
    expect(events[4]?.lambdaFunctionFailedEventDetails?.error).toBe('OriginAuthFailed');
    expect(events[7]?.executionFailedEventDetails?.error).toBe('ImportFailed');
  });
});

describe('the history quota', () => {
  /** Runs the Rounds machine to its end (a run of 25,000 events takes seconds). */
  async function rounds(until: number) {
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: local.stateMachineArn('Rounds'),
        input: JSON.stringify({ until }),
      }),
    );
    let execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    while (execution.status === 'RUNNING') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    }
    return { execution, events: await history(executionArn ?? '', 1000) };
  }

  it('fails an execution at its 25,000th event, as AWS does', async () => {
    const { execution, events } = await rounds(4000);
    expect(execution.status).toBe('FAILED');
    expect(execution.error).toBe('States.Runtime');
    expect(events).toHaveLength(25_000);
    expect(events.at(-1)?.type).toBe('ExecutionFailed');
  }, 120_000);

  it('runs an execution below it to the end', async () => {
    const { execution, events } = await rounds(3000);
    expect(execution.status).toBe('SUCCEEDED');
    expect(events.length).toBeGreaterThan(21_000);
    expect(events.length).toBeLessThan(25_000);
  }, 120_000);
});
