import { describe, expect, it } from 'vitest';
import {
  interruptedFailure,
  QUIET_BEFORE_CHECK_MS,
  restartResumes,
  worthCheckingEnded,
} from '#domain/import-resume';

describe('an import whose execution may have ended without a word', () => {
  const at = Date.parse('2026-12-02T07:00:00Z');
  const quietFor = (ms: number) => new Date(at - ms).toISOString();

  it('is asked about only in progress and once quiet', () => {
    expect(worthCheckingEnded({ status: 'importing', updatedAt: quietFor(QUIET_BEFORE_CHECK_MS) }, at)).toBe(
      true,
    );
    expect(
      worthCheckingEnded({ status: 'pushing', updatedAt: quietFor(QUIET_BEFORE_CHECK_MS - 1) }, at),
    ).toBe(false);
    expect(worthCheckingEnded({ status: 'detecting', updatedAt: quietFor(60_000) }, at)).toBe(true);
    expect(worthCheckingEnded({ status: 'complete', updatedAt: quietFor(60_000) }, at)).toBe(false);
    expect(worthCheckingEnded({ status: 'error', updatedAt: quietFor(60_000) }, at)).toBe(false);
  });

  it('fails in the step its status was in, says how the execution ended, and resumes on restart', () => {
    for (const [status, step] of [
      ['importing', 'raw'],
      ['mapping', 'rewrite'],
      ['pushing', 'push'],
    ] as const) {
      const failure = interruptedFailure(status, 'TIMED_OUT');
      expect(failure.failedStep).toBe(step);
      expect(failure.errorMessage).toContain('(TIMED_OUT)');
      expect(failure.errorMessage).toMatch(/restart the import to continue/);
      expect(
        restartResumes({ vcs: 'git', status: 'error', failedStep: failure.failedStep }, false, true),
      ).toBe(true);
    }
  });
});
