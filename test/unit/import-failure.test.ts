import { describe, expect, it } from 'vitest';
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
});
