/**
 * What the user reads of a Mercurial failure: the step, and the tool's own words without the
 * service's paths. The whole of stderr goes to the logs only.
 */
import type { GitFailed } from '#vcs/git-command';

/** The step a conversion failure names. */
export const CONVERSION_FAILED = 'Converting the Mercurial history to Git failed';

/**
 * Text for the user without the service's own paths (work directory, HOME, `raw.hg`): what the
 * user sees names the origin's problem, not our disk.
 */
export const hideLocalPaths = (text: string) => text.replace(/(^|[\s'"`(=])\/[^\s'"`)]*/g, '$1<path>');

/**
 * The conversion's own last words: the Python program's last exception or abort line, else git's
 * first error, else the last line; without local paths.
 */
export function conversionWords(error: GitFailed): string {
  const lines = error.stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && line !== '(aborted)' && !/^converted \d+\/\d+$/.test(line));
  const words =
    lines.filter((line) => /^(?:[\w.]*(?:Error|Exception)\b|abort:)/.test(line)).at(-1) ??
    lines.find((line) => /^(?:error|fatal):/.test(line)) ??
    lines.at(-1) ??
    `the conversion exited with ${error.exitCode}`;
  return hideLocalPaths(words).slice(0, 300);
}
