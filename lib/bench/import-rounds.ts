/**
 * The import benchmark's arithmetic, apart from what runs it (`import.ts`): where an import's time
 * went as the client sees it, from its execution's history, and the summary of alternating rounds
 * of the floor (git alone) and the import.
 */
import { median } from './measure.ts';

/** One event of an execution's history: its type, its time (ms since the epoch), the state it names. */
export interface HistoryMark {
  readonly type: string;
  readonly at: number;
  readonly state?: string;
}

/**
 * An import as its client waits for it, in ms, from the moment the PUT was sent:
 * - `request`: until the PUT's answer arrived;
 * - `start`: until the execution's first event (the API's writes, StartExecution, the runner);
 * - `steps`: inside the Task states (the steps' own work, task invocations included);
 * - `between`: everything else inside the execution (Choice states, transitions, waits);
 * - `execution`: until the execution's last event (when `complete` was written and its run ended);
 * - `seen`: until a poll saw `complete` (`execution` plus the polling's lateness).
 */
export interface ClientPhases {
  readonly request: number;
  readonly start: number;
  readonly steps: number;
  readonly between: number;
  readonly execution: number;
  readonly seen: number;
  /** States entered, in order. */
  readonly states: readonly string[];
}

/**
 * The phases of one import: `sentAt` when the PUT was sent, `answeredAt` when its answer came,
 * `seenAt` when a poll first read `complete` (all ms since the epoch, as the history's times).
 */
export function clientPhases(
  history: readonly HistoryMark[],
  sentAt: number,
  answeredAt: number,
  seenAt: number,
): ClientPhases {
  const first = history[0]?.at ?? sentAt;
  const last = history.at(-1)?.at ?? first;
  let steps = 0;
  let taskEnteredAt: number | undefined;
  const states: string[] = [];
  for (const mark of history) {
    if (mark.type.endsWith('StateEntered') && mark.state !== undefined) states.push(mark.state);
    if (mark.type === 'TaskStateEntered') taskEnteredAt = mark.at;
    if (mark.type === 'TaskStateExited' && taskEnteredAt !== undefined) {
      steps += mark.at - taskEnteredAt;
      taskEnteredAt = undefined;
    }
  }
  return {
    request: answeredAt - sentAt,
    start: first - sentAt,
    steps,
    between: last - first - steps,
    execution: last - sentAt,
    seen: seenAt - sentAt,
    states,
  };
}

/** Milliseconds from entering each state to entering the next (the last: to the end), summed by state. */
export function stateTimes(history: readonly HistoryMark[]): Record<string, number> {
  const end = history.at(-1)?.at ?? 0;
  const entered = history.filter((mark) => mark.type.endsWith('StateEntered') && mark.state !== undefined);
  const times: Record<string, number> = {};
  entered.forEach((mark, i) => {
    const name = mark.state ?? '';
    times[name] = (times[name] ?? 0) + (entered[i + 1]?.at ?? end) - mark.at;
  });
  return times;
}

/** The smallest, the median and the largest of some samples. */
export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

export const spreadOf = (samples: readonly number[]): Spread => ({
  min: Math.min(...samples),
  median: median(samples),
  max: Math.max(...samples),
});

/** One round: git alone (clone then push), then the import, each in ms. */
export interface Round {
  readonly floorMs: number;
  readonly import: ClientPhases;
  /** The import's `stateTimes`. */
  readonly stateMs: Readonly<Record<string, number>>;
}

export interface RoundsSummary {
  readonly floor: Spread;
  /** PUT → a poll reads `complete`. */
  readonly seen: Spread;
  /** PUT → the execution's end. */
  readonly execution: Spread;
  /** Import ÷ floor, round by round (each pair ran under the same load). */
  readonly seenRatios: readonly number[];
  readonly executionRatios: readonly number[];
  /** Medians of the ratios. */
  readonly seenRatio: number;
  readonly executionRatio: number;
  /** Median of each phase over the rounds. */
  readonly phases: Omit<ClientPhases, 'states'>;
  /** Median time of each state over the rounds, in the order of the first round's. */
  readonly stateMs: Readonly<Record<string, number>>;
}

export function summarizeRounds(rounds: readonly Round[]): RoundsSummary {
  if (rounds.length === 0) throw new Error('no rounds to summarize');
  const seenRatios = rounds.map((round) => round.import.seen / round.floorMs);
  const executionRatios = rounds.map((round) => round.import.execution / round.floorMs);
  const phase = (name: keyof Omit<ClientPhases, 'states'>) =>
    median(rounds.map((round) => round.import[name]));
  return {
    floor: spreadOf(rounds.map((round) => round.floorMs)),
    seen: spreadOf(rounds.map((round) => round.import.seen)),
    execution: spreadOf(rounds.map((round) => round.import.execution)),
    seenRatios,
    executionRatios,
    seenRatio: median(seenRatios),
    executionRatio: median(executionRatios),
    phases: {
      request: phase('request'),
      start: phase('start'),
      steps: phase('steps'),
      between: phase('between'),
      execution: phase('execution'),
      seen: phase('seen'),
    },
    stateMs: Object.fromEntries(
      Object.keys(rounds[0]?.stateMs ?? {}).map((name) => [
        name,
        median(rounds.map((round) => round.stateMs[name] ?? 0)),
      ]),
    ),
  };
}
