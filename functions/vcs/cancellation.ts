/**
 * The cancellation every tool run inherits: work started inside `runCancellable(signal, …)` (an
 * import step) has each child process that `runBounded` starts killed, process group and all, when
 * `signal` aborts, without the adapters in between passing a signal along. The signal travels
 * with the async context (`AsyncLocalStorage`), so concurrent steps in one process never share it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const ambient = new AsyncLocalStorage<readonly AbortSignal[]>();

/** Runs `work` under `signal` (added to any enclosing one: either aborting cancels the work). */
export function runCancellable<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  return ambient.run([...(ambient.getStore() ?? []), signal], work);
}

/** The signals of the enclosing `runCancellable` calls, innermost last (none outside them). */
export const ambientSignals = (): readonly AbortSignal[] => ambient.getStore() ?? [];
