/**
 * The sync scheduler on this machine: the handler the EventBridge rule invokes in AWS
 * (`functions/workflow/start-due-syncs.ts`), called from a timer with the event the rule sends
 * (a "Scheduled Event" whose `time` is the tick's, to the second), as the worker image function it
 * is (the machine's PATH: its origin check runs `git`). The as-deployed tests pass `invoke`
 * instead: the deployed function in the image's root under Lambda's user. Ticks never overlap: a
 * tick that is still running when the next is due delays it.
 */
import { randomUUID } from 'node:crypto';
import { asImageFunction } from './zip-runtime.ts';

/** Loaded like the workflow's task handlers (`import-workflow.ts`): the entry point AWS runs. */
const HANDLER = new URL('../../functions/workflow/start-due-syncs.ts', import.meta.url);

/** EventBridge's `rate(1 minute)`. */
export const SYNC_TICK_MS = 60_000;

/** What EventBridge sends a rule's Lambda target on each tick. */
export interface RuleEvent {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': 'Scheduled Event';
  readonly source: 'aws.events';
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: Record<string, never>;
}

export interface SyncTimerOptions {
  /** Milliseconds between ticks (default a minute, as the rule). */
  readonly tickMs?: number;
  /**
   * The scheduler's clock, the event's `time` (default: now). A local-only setting: tests move it
   * ahead to make a sync due without waiting its interval; nothing else reads it.
   */
  readonly clock?: () => number;
  /** The rule's ARN, the event's one resource. */
  readonly ruleArn?: string;
  /** Delivers each tick's event (default: the handler's module in this process). */
  readonly invoke?: (event: RuleEvent) => Promise<unknown>;
}

export interface SyncTimer {
  stop(): Promise<void>;
}

/** The handler's module in this process, run as the image function it is. */
function inProcess(): (event: RuleEvent) => Promise<unknown> {
  type Handler = (event: RuleEvent) => Promise<unknown>;
  const handler = import(HANDLER.href).then((module) => (module as { handler: Handler }).handler);
  return (event) => handler.then((run) => asImageFunction(() => run(event)));
}

export function ruleEvent(at: number, ruleArn: string): RuleEvent {
  const [, region = 'us-east-1', account = '123456789012'] = ruleArn.split(':').slice(2);
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account,
    // EventBridge's time has no fraction of a second.
    time: new Date(Math.floor(at / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    region,
    resources: [ruleArn],
    detail: {},
  };
}

export function startSyncTimer(options: SyncTimerOptions = {}): SyncTimer {
  const tickMs = options.tickMs ?? SYNC_TICK_MS;
  const clock = options.clock ?? Date.now;
  const ruleArn = options.ruleArn ?? 'arn:aws:events:us-east-1:123456789012:rule/local-sync-scheduler';
  const invoke = options.invoke ?? inProcess();
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = invoke(ruleEvent(clock(), ruleArn))
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
