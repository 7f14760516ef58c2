import { describe, expect, it } from 'vitest';
import { clientPhases, stateTimes, summarizeRounds } from '#bench/import-rounds';

const SENT = 1_000_000;
/** An import's history as the local runner writes it: a Choice, two Tasks with a Choice between. */
const history = [
  { type: 'ExecutionStarted', at: SENT + 40 },
  { type: 'ChoiceStateEntered', at: SENT + 40, state: 'WhereToStart' },
  { type: 'ChoiceStateExited', at: SENT + 41, state: 'WhereToStart' },
  { type: 'TaskStateEntered', at: SENT + 41, state: 'ImportRawHistory' },
  { type: 'LambdaFunctionSucceeded', at: SENT + 1041 },
  { type: 'TaskStateExited', at: SENT + 1041, state: 'ImportRawHistory' },
  { type: 'ChoiceStateEntered', at: SENT + 1045, state: 'IsRawHistoryComplete' },
  { type: 'ChoiceStateExited', at: SENT + 1050, state: 'IsRawHistoryComplete' },
  { type: 'TaskStateEntered', at: SENT + 1050, state: 'Complete' },
  { type: 'TaskStateExited', at: SENT + 1100, state: 'Complete' },
  { type: 'ExecutionSucceeded', at: SENT + 1100 },
];

describe('clientPhases', () => {
  it('splits the wait into the request, the start, the steps, what lies between them and the polling', () => {
    expect(clientPhases(history, SENT, SENT + 30, SENT + 1250)).toEqual({
      request: 30,
      start: 40,
      steps: 1050,
      between: 10,
      execution: 1100,
      seen: 1250,
      states: ['WhereToStart', 'ImportRawHistory', 'IsRawHistoryComplete', 'Complete'],
    });
  });
});

describe('stateTimes', () => {
  it('gives each state the time from its entry to the next state’s, the last one to the end', () => {
    expect(stateTimes(history)).toEqual({
      WhereToStart: 1,
      ImportRawHistory: 1004,
      IsRawHistoryComplete: 5,
      Complete: 50,
    });
  });
});

describe('summarizeRounds', () => {
  const phases = (execution: number, seen: number) => ({
    ...clientPhases(history, SENT, SENT + 30, SENT + seen),
    execution,
  });
  it('takes each round’s ratio to its own floor, and the medians and extremes of each', () => {
    const summary = summarizeRounds([
      { floorMs: 2000, import: phases(1800, 1900), stateMs: { Push: 300 } },
      { floorMs: 1000, import: phases(1100, 1200), stateMs: { Push: 100 } },
      { floorMs: 4000, import: phases(3000, 3200), stateMs: { Push: 200 } },
    ]);
    expect(summary.floor).toEqual({ min: 1000, median: 2000, max: 4000 });
    expect(summary.seen).toEqual({ min: 1200, median: 1900, max: 3200 });
    expect(summary.seenRatios).toEqual([0.95, 1.2, 0.8]);
    expect(summary.seenRatio).toBe(0.95);
    expect(summary.executionRatios).toEqual([0.9, 1.1, 0.75]);
    expect(summary.executionRatio).toBe(0.9);
    expect(summary.phases.seen).toBe(1900);
    expect(summary.stateMs).toEqual({ Push: 200 });
  });

  it('refuses to summarize no rounds', () => {
    expect(() => summarizeRounds([])).toThrow('no rounds');
  });
});
