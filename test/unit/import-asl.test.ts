import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IMPORT_ASL_FILE } from '#cdk/paths';
import { placeholderOf, placeholdersIn, WORKFLOW_TASKS } from '#cdk/workflow-tasks';
import { WORKER_DEATH_RETRIES, WORKER_DEATHS } from '#domain/worker-death';
import { LAMBDA_MAX_TIMEOUT_SECONDS } from '#local/step-functions/definition';

interface Retrier {
  readonly ErrorEquals: readonly string[];
  readonly IntervalSeconds?: number;
  readonly MaxAttempts?: number;
  readonly BackoffRate?: number;
  readonly MaxDelaySeconds?: number;
  readonly JitterStrategy?: string;
}
interface Catcher {
  readonly ErrorEquals?: readonly string[];
  readonly Next?: string;
}
interface State {
  readonly Type: string;
  readonly Resource?: string;
  readonly Parameters?: Record<string, unknown>;
  readonly Next?: string;
  readonly End?: boolean;
  readonly Default?: string;
  readonly Choices?: readonly Record<string, unknown>[];
  readonly Retry?: readonly Retrier[];
  readonly Catch?: readonly Catcher[];
  readonly QueryLanguage?: string;
  readonly Branches?: readonly Machine[];
  readonly ItemProcessor?: Machine;
  readonly Iterator?: Machine;
}
interface Machine {
  readonly StartAt: string;
  readonly States: Record<string, State>;
  readonly QueryLanguage?: string;
}

/** Every state a state can move to: Next, Default, each Choice's Next and each Catch's Next. */
function successors(state: State): string[] {
  return [
    state.Next,
    state.Default,
    ...(state.Choices ?? []).map((choice) => choice.Next as string | undefined),
    ...(state.Catch ?? []).map((catcher) => catcher.Next),
  ].filter((name): name is string => name !== undefined);
}

/** Every (nested) machine: the top level, Parallel branches and Map processors. */
function machines(machine: Machine): Machine[] {
  return [
    machine,
    ...Object.values(machine.States).flatMap((state) =>
      [...(state.Branches ?? []), state.ItemProcessor ?? state.Iterator]
        .filter((nested): nested is Machine => nested !== undefined)
        .flatMap(machines),
    ),
  ];
}

const LAMBDA_WAIT = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
const source = readFileSync(IMPORT_ASL_FILE, 'utf8');

describe('statemachines/import.asl.json', () => {
  it('is valid JSON in JSONPath, with no JSONata, Assign or variables anywhere', () => {
    const definition = JSON.parse(source) as Machine;
    expect(definition.StartAt).toBeTypeOf('string');
    expect(definition.QueryLanguage ?? 'JSONPath').toBe('JSONPath');
    expect(source).not.toMatch(/"QueryLanguage"\s*:\s*"JSONata"/);
    expect(source).not.toMatch(/"(Assign|Arguments|Output)"\s*:/);
    expect(source).not.toMatch(/\{%/);
  });

  it('uses exactly the placeholders the stack substitutes, each once as a Task function', () => {
    const expected = WORKFLOW_TASKS.map((task) => placeholderOf(task.name)).sort();
    expect(placeholdersIn(source).sort()).toEqual(expected);
  });

  it('names its Task functions only as bare placeholders or as waitForTaskToken FunctionName', () => {
    for (const machine of machines(JSON.parse(source) as Machine)) {
      for (const [name, state] of Object.entries(machine.States)) {
        if (state.Type !== 'Task') continue;
        if (state.Resource === LAMBDA_WAIT) {
          expect(state.Parameters?.FunctionName, name).toBe(`\${${placeholderOf('WaitForPerson')}}`);
          expect(state.Parameters?.Payload, name).toBeDefined();
        } else {
          expect(state.Resource, name).toMatch(/^\$\{[A-Za-z]+FunctionArn\}$/);
          expect(state.Resource, name).not.toBe(`\${${placeholderOf('WaitForPerson')}}`);
        }
      }
    }
  });

  it('moves only to states that exist, ends somewhere, and reaches every state from StartAt', () => {
    for (const machine of machines(JSON.parse(source) as Machine)) {
      const names = Object.keys(machine.States);
      expect(names).toContain(machine.StartAt);
      for (const [name, state] of Object.entries(machine.States)) {
        for (const next of successors(state)) expect(names, `${name} → ${next}`).toContain(next);
        const terminal = state.Type === 'Succeed' || state.Type === 'Fail' || state.End === true;
        const moves = state.Type === 'Choice' ? successors(state).length > 0 : state.Next !== undefined;
        expect(terminal || moves, `${name} neither ends nor moves on`).toBe(true);
      }
      const reached = new Set([machine.StartAt]);
      const queue = [machine.StartAt];
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        for (const next of successors(machine.States[name] as State)) {
          if (!reached.has(next)) {
            reached.add(next);
            queue.push(next);
          }
        }
      }
      expect([...reached].sort()).toEqual([...names].sort());
    }
  });

  it('gives every Task a Retry and a Catch', () => {
    for (const machine of machines(JSON.parse(source) as Machine)) {
      for (const [name, state] of Object.entries(machine.States)) {
        if (state.Type !== 'Task') continue;
        expect(state.Retry?.length ?? 0, `${name} Retry`).toBeGreaterThan(0);
        expect(state.Catch?.length ?? 0, `${name} Catch`).toBeGreaterThan(0);
      }
    }
  });

  it('continues a loop that spent its rounds in the next part of the attempt, and ends this execution in a Succeed state', () => {
    const { States: states } = JSON.parse(source) as Machine;
    const spent = (choice: string) =>
      (states[choice]?.Choices ?? [])
        .map((rule) => rule.Next)
        .filter((next) => String(next).endsWith('RoundsSpent'));
    expect(spent('IsRawHistoryComplete')).toEqual(['RawRoundsSpent']);
    expect(spent('IsPushComplete')).toEqual(['PushRoundsSpent']);
    for (const [pass, startAt] of [
      ['RawRoundsSpent', 'import'],
      ['PushRoundsSpent', 'push'],
    ] as const) {
      expect(states[pass]?.Type).toBe('Pass');
      expect(states[pass]?.Next).toBe('ContinueInNewExecution');
      expect((states[pass] as { Result?: { startAt?: string } }).Result?.startAt).toBe(startAt);
    }
    expect(states.ContinueInNewExecution?.Resource).toBe(`\${${placeholderOf('ContinueInNewExecution')}}`);
    expect(states.ContinueInNewExecution?.Next).toBe('ContinuedInNewExecution');
    expect(states.ContinuedInNewExecution?.Type).toBe('Succeed');
    expect(states.ContinueInNewExecution?.Catch?.[0]?.Next).toBe('ContinuationFailed');
    expect(states.ContinuationFailed?.Next).toBe('Error');
    // A later part starting at the push goes straight to it.
    expect(states.WhereToStart?.Choices).toContainEqual({
      Variable: '$.startAt',
      StringEquals: 'push',
      Next: 'Push',
    });
  });

  it('retries a dead worker on every Task: bounded, with backoff and jitter, before any Catch', () => {
    for (const machine of machines(JSON.parse(source) as Machine)) {
      for (const [name, state] of Object.entries(machine.States)) {
        if (state.Type !== 'Task') continue;
        const retriers = (state.Retry ?? []).filter((retrier) =>
          WORKER_DEATHS.some((death) => retrier.ErrorEquals.includes(death)),
        );
        expect(retriers.length, `${name}: one retrier for a dead worker`).toBe(1);
        const [deaths] = retriers;
        expect([...(deaths?.ErrorEquals ?? [])].sort(), name).toEqual([...WORKER_DEATHS].sort());
        expect(deaths, name).toMatchObject({ MaxAttempts: WORKER_DEATH_RETRIES, JitterStrategy: 'FULL' });
        expect(deaths?.IntervalSeconds ?? 0, name).toBeGreaterThan(0);
        expect(deaths?.BackoffRate ?? 0, name).toBeGreaterThan(1);
        expect(deaths?.MaxDelaySeconds ?? 0, name).toBeGreaterThan(0);
        // No earlier retrier takes them (a wildcard would, with its own count).
        const first = (state.Retry ?? []).indexOf(deaths as Retrier);
        for (const earlier of (state.Retry ?? []).slice(0, first))
          expect(
            earlier.ErrorEquals.filter((error) => error.startsWith('States.')),
            name,
          ).toEqual([]);
      }
    }
  });

  it("waits out Lambda's concurrency limit on every Task for longer than a step may hold a slot", () => {
    for (const machine of machines(JSON.parse(source) as Machine)) {
      for (const [name, state] of Object.entries(machine.States)) {
        if (state.Type !== 'Task') continue;
        const throttled = (state.Retry ?? []).filter((retrier) =>
          retrier.ErrorEquals.includes('Lambda.TooManyRequestsException'),
        );
        expect(throttled.length, `${name}: one retrier for Lambda's concurrency limit`).toBe(1);
        const [retrier] = throttled as [Retrier];
        expect(retrier.ErrorEquals, name).toEqual(['Lambda.TooManyRequestsException']);
        expect(retrier.JitterStrategy, name).toBe('FULL');
        // Full jitter waits half of each delay on average: together more than a worker step's
        // longest run (Lambda's 15 minutes), so a slot a step holds that long frees in time.
        let meanWait = 0;
        for (let attempt = 0; attempt < (retrier.MaxAttempts ?? 3); attempt++) {
          const delay = (retrier.IntervalSeconds ?? 1) * (retrier.BackoffRate ?? 2) ** attempt;
          meanWait += Math.min(delay, retrier.MaxDelaySeconds ?? Number.POSITIVE_INFINITY) / 2;
        }
        expect(meanWait, name).toBeGreaterThan(LAMBDA_MAX_TIMEOUT_SECONDS);
      }
    }
  });
});
