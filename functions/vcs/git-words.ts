/**
 * What git said when a call failed, fit for the user's `error_message`: git's (and the origin's,
 * `remote: …`) own lines in the order printed, without progress, hints and the lines that only
 * name a local directory; local paths the caller names replaced by `…`, credentials in URLs
 * removed. The cause usually comes first (`remote: fatal: bad tree object …`), its consequences
 * after (`fatal: early EOF`), so a message cut to its length keeps the cause.
 */
import { dirname } from 'node:path';
import { FAILURE_TAIL_CHARS, redactCredentials } from './bounded-process.ts';
import { GitFailed } from './git-command.ts';
import type { GitJob } from './git-job.ts';
import { OriginFailed } from './origin.ts';

/** Most characters of git's words in one message (`error_message` holds 500 in all). */
const MAX_WORDS = 400;

/** Lines that carry no reason: progress, hints, where git was writing, push headers. */
const NOISE =
  /^(?:remote:\s*)?(?:$|hint:|Cloning into|Counting objects|Compressing objects|Enumerating objects|Receiving objects|Resolving deltas|Writing objects|Unpacking objects|Delta compression|Total \d|Checking connectivity|Updating files|To \S|From \S|warning: redirecting)/;

/**
 * Terminal sequences and control characters: the origin's sideband lines end in padding and a
 * clear-to-end-of-line sequence, and an origin may send any bytes.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
const TERMINAL_CODES = /\x1b\[[0-9;]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]/g;

/** A progress line, whatever its label: `… 12% (2003/16691)`. */
const PROGRESS = /\d{1,3}% \(\d+\/\d+\)/;

/** Where git's advice after a stale lock file begins: the rest is that advice, not a reason. */
const ADVICE = /^Another git process seems to be running/;

/** Git's words in `stderr`, with each of `hide` (local paths, a secret) replaced by `…`. */
export function gitWords(stderr: string, hide: readonly (string | undefined)[] = []): string {
  const secrets = hide.filter((part): part is string => typeof part === 'string' && part.length > 0);
  // Longest first, so a path inside another hidden path is not left half-replaced.
  secrets.sort((a, b) => b.length - a.length);
  const lines: string[] = [];
  const printed = redactCredentials(stderr).split(/[\r\n]+/);
  // A tail as long as a failure keeps begins mid-line: that first piece is not git's words.
  if (stderr.length >= FAILURE_TAIL_CHARS) printed.shift();
  for (const raw of printed) {
    let line = raw.replace(TERMINAL_CODES, '').replace(/\s+/g, ' ').trim();
    if (ADVICE.test(line)) break;
    if (NOISE.test(line) || PROGRESS.test(line)) continue;
    for (const secret of secrets) line = line.split(secret).join('…');
    if (!lines.includes(line)) lines.push(line);
  }
  let words = '';
  for (const line of lines) {
    const next = words === '' ? line : `${words}; ${line}`;
    if (next.length > MAX_WORDS) return words === '' ? `${line.slice(0, MAX_WORDS)}…` : `${words}; …`;
    words = next;
  }
  return words;
}

/**
 * A failed step of the history or push work, as the user reads it: `<what> failed (git <command>):
 * <git's words>`. Anything but a git failure that ran to its end (a timeout, a limit, a readable
 * error already) is returned as it was.
 */
export function stepFailure(error: unknown, what: string, hide: readonly (string | undefined)[]): unknown {
  if (!(error instanceof GitFailed) || error.timedOut) return error;
  const command = error.args.find((arg) => !arg.startsWith('-') && !arg.includes('=')) ?? '';
  const words = gitWords(error.stderr, hide);
  return new OriginFailed(
    `${what} failed (git ${command}${error.exitCode === null ? '' : `, exit ${error.exitCode}`})${words === '' ? '' : `: ${words}`}`,
    { cause: error },
  );
}

/** Local paths no message shows: the repositories, the directories holding them, the job's HOME. */
export const hiddenPaths = (job: GitJob, ...repositories: readonly string[]): string[] => [
  ...repositories,
  ...repositories.map((path) => dirname(path)),
  job.home,
];
