/**
 * The sync scheduler on this machine: the handler the EventBridge rule invokes in AWS
 * (`functions/workflow/start-due-syncs.ts`), called from a timer with the rule's event shape, as
 * the worker image function it is (the machine's PATH: its origin check runs `git`). Ticks never
 * overlap: a tick that is still running when the next is due delays it.
 */
import { asImageFunction } from './zip-runtime.ts';

/** Loaded like the workflow's task handlers (`import-workflow.ts`): the entry point AWS runs. */
const HANDLER = new URL('../../functions/workflow/start-due-syncs.ts', import.meta.url);
type Handler = (event: { time: string }) => Promise<unknown>;

/** EventBridge's `rate(1 minute)`. */
export const SYNC_TICK_MS = 60_000;

export interface SyncTimerOptions {
  /** Milliseconds between ticks (default a minute, as the rule). */
  readonly tickMs?: number;
  /**
   * The scheduler's clock, the event's `time` (default: now). A local-only setting: tests move it
   * ahead to make a sync due without waiting its interval; nothing else reads it.
   */
  readonly clock?: () => number;
}

export interface SyncTimer {
  stop(): Promise<void>;
}

export function startSyncTimer(options: SyncTimerOptions = {}): SyncTimer {
  const tickMs = options.tickMs ?? SYNC_TICK_MS;
  const clock = options.clock ?? Date.now;
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const handler = import(HANDLER.href).then((module) => (module as { handler: Handler }).handler);
  const tick = () => {
    running = handler
      .then((run) => asImageFunction(() => run({ time: new Date(clock()).toISOString() })))
      .catch((error: unknown) => console.error('sync scheduler tick failed:', (error as Error).message))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, tickMs);
      });
  };
  timer = setTimeout(tick, tickMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
