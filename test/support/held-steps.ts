import { placeholderOf } from '#cdk/workflow-tasks';
import type { LocalStateMachine } from '#local/step-functions';

/**
 * A workflow step that waits, for the local stack: the invocations of the repositories held do
 * not run until `release`, so their imports stay where the step leaves them (`importing` for the
 * raw step) for as long as a test needs. Other repositories' invocations run as usual.
 */
export interface HeldStep {
  /** The state machine with the step wrapped. */
  readonly machine: LocalStateMachine;
  hold(...repos: string[]): void;
  /** Lets every held invocation run, and holds nothing more. */
  release(): void;
  /** Repositories with an invocation waiting now. */
  readonly waiting: readonly string[];
}

export function heldStep(machine: LocalStateMachine, step: string): HeldStep {
  const held = new Set<string>();
  const waiting = new Map<string, () => void>();
  const placeholder = placeholderOf(step);
  const run = machine.tasks[placeholder];
  if (!run) throw new Error(`no task ${step}`);
  const tasks = {
    ...machine.tasks,
    [placeholder]: async (input: unknown) => {
      const repo = (input as { repo?: string }).repo ?? '';
      if (held.has(repo)) await new Promise<void>((resolve) => waiting.set(repo, resolve));
      return run(input);
    },
  };
  return {
    machine: { ...machine, tasks },
    hold(...repos) {
      for (const repo of repos) held.add(repo);
    },
    release() {
      held.clear();
      for (const go of waiting.values()) go();
      waiting.clear();
    },
    get waiting() {
      return [...waiting.keys()];
    },
  };
}
