/** A Mercurial conversion failure shows the program's own last words, without the service's paths. */
import { describe, expect, it } from 'vitest';
import { GitFailed } from '#vcs/git-command';
import { conversionWords } from '#vcs/mercurial/words';

const failed = (stderr: string) => new GitFailed(['fast-import'], 1, stderr, false);

describe('conversionWords', () => {
  it("names the program's last exception, not git's complaint about the cut stream, without local paths", () => {
    const stderr = [
      'converted 100/250',
      'Traceback (most recent call last):',
      '  File "<string>", line 12, in <module>',
      'mercurial.error.RevlogError: integrity check failed on /tmp/job-3f/raw.hg/.hg/store/data/a.i:4',
      'fatal: stream ends early',
      'fast-import: dumping crash report to /tmp/job-3f/raw.git/fast_import_crash_42',
    ].join('\n');
    expect(conversionWords(failed(stderr))).toBe(
      'mercurial.error.RevlogError: integrity check failed on <path>',
    );
  });

  it("falls back to git's first error, then to the exit code", () => {
    expect(conversionWords(failed("fatal: Unsupported command: oops in '/work/x/raw.git'\n"))).toBe(
      "fatal: Unsupported command: oops in '<path>'",
    );
    expect(conversionWords(failed('converted 5/5\n'))).toBe('the conversion exited with 1');
  });
});
