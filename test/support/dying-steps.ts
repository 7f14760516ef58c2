import { placeholderOf } from '#cdk/workflow-tasks';
import type { LocalStateMachine } from '#local/step-functions';

/**
 * A workflow step whose execution environment keeps dying, for the local stack (the deployed
 * project kills real sandboxes, `#local/lambda-faults`): once armed for a repository, its
 * `from`-th invocation and every one after it fail as Lambda reports a runtime killed before it
 * got anywhere (`Runtime.ExitError`), the step's retries too, until the import ends in `error`
 * or the test disarms it. Other repositories' invocations run as usual.
 */
export interface DyingStep {
  /** The state machine with the step wrapped. */
  readonly machine: LocalStateMachine;
  /** From this repository's `from`-th invocation of the step on (counted from now), each one dies. */
  arm(repo: string, from: number): void;
  disarm(): void;
  /** Invocations that died since the last `arm`. */
  readonly deaths: number;
}

export function dyingStep(machine: LocalStateMachine, step: string): DyingStep {
  const armed = { repo: '', from: 0, seen: 0, deaths: 0 };
  const placeholder = placeholderOf(step);
  const run = machine.tasks[placeholder];
  if (!run) throw new Error(`no task ${step}`);
  const tasks = {
    ...machine.tasks,
    [placeholder]: async (input: unknown) => {
      if (armed.repo !== '' && (input as { repo?: string }).repo === armed.repo) {
        armed.seen += 1;
        if (armed.seen >= armed.from) {
          armed.deaths += 1;
          const died = new Error('Error: Runtime exited with error: signal: killed');
          died.name = 'Runtime.ExitError';
          throw died;
        }
      }
      return run(input);
    },
  };
  return {
    machine: { ...machine, tasks },
    arm(repo, from) {
      Object.assign(armed, { repo, from, seen: 0, deaths: 0 });
    },
    disarm() {
      armed.repo = '';
    },
    get deaths() {
      return armed.deaths;
    },
  };
}
