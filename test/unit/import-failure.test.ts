import { describe, expect, it } from 'vitest';
import { WORKER_DEATH_RETRIES, WORKER_DEATHS } from '#domain/worker-death';
import { readableFailure } from '#services/import-worker';

/** What a user reads in `error_message` for what a Catch handed the Error state. */
describe('readableFailure', () => {
  const lambdaCause = (errorType: string, errorMessage: string) =>
    JSON.stringify({
      errorType,
      errorMessage,
      trace: [`${errorType}: ${errorMessage}`, '    at /var/task/index.mjs:1:2'],
    });

  it("shows the adapter's own sentence for origin failures, never the trace", () => {
    const message = readableFailure('raw', {
      Error: 'OriginFailed',
      Cause: lambdaCause('OriginFailed', 'The repository was not found at the URL'),
    });
    expect(message).toBe('The repository was not found at the URL');
  });

  it('removes credentials a message might carry in a URL', () => {
    const message = readableFailure('raw', {
      Error: 'OriginFailed',
      Cause: lambdaCause('OriginFailed', 'could not fetch https://user:hunter2@example.org/x.git'),
    });
    expect(message).not.toContain('hunter2');
  });

  it('says a timeout in plain words', () => {
    expect(readableFailure('detection', { Error: 'States.Timeout', Cause: '' })).toBe(
      'The detection step timed out waiting for an answer',
    );
  });

  it('hides anything else behind one sentence naming the step', () => {
    const message = readableFailure('push', {
      Error: 'TypeError',
      Cause: lambdaCause('TypeError', "Cannot read properties of undefined (reading 'x') at /var/task"),
    });
    expect(message).toBe('The push step failed unexpectedly; restart the import to try again');
  });

  it('says what died and where when a worker died on every retry, never "failed unexpectedly"', () => {
    const killed = readableFailure(
      'raw',
      {
        Error: 'Runtime.ExitError',
        Cause: lambdaCause('Runtime.ExitError', 'Error: Runtime exited with error: signal: killed'),
      },
      { commitCount: 120, percent: 40 },
    );
    expect(killed).toBe(
      `The import's raw history step ended ${WORKER_DEATH_RETRIES + 1} times: its worker was stopped (Runtime.ExitError) while importing, after 120 commits (40%); restart the import to try again`,
    );
    const unknown = readableFailure(
      'push',
      {
        Error: 'Lambda.Unknown',
        Cause: 'The cause could not be determined because Lambda did not return an error type.',
      },
      { pushPercent: 50 },
    );
    expect(unknown).toMatch(
      /push step ended \d+ times: .*out of memory.*\(Lambda\.Unknown\) while pushing, at 50%/,
    );
    for (const death of WORKER_DEATHS) {
      const message = readableFailure('rewrite', { Error: death, Cause: '' });
      expect(message).toContain(`(${death}) while it rewrote the history`);
      expect(message).not.toMatch(/unexpectedly/);
    }
  });
});
