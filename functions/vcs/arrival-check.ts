/**
 * Git's object checks as objects arrive, where git can make them: a fetch over the pack protocol
 * (smart HTTP, `git://`) with `fetch.fsckObjects` has its `index-pack` or `unpack-objects` check
 * every object it receives with `--strict`, in the pass that already inflates and hashes each one.
 * `git fsck --strict` afterwards (`history-check.ts`) makes that whole pass a second time: for
 * Lua's history it cost as much as the clone itself (docs/decisions.md, "The import's lost
 * second").
 *
 * Dumb HTTP's walker writes what it downloads unchecked whatever the config says, so a fetch
 * counts as checked only when git's own trace (trace2's `child_start` events) shows that every
 * process that wrote objects was started with `--strict`, and that at least one was. A raw
 * repository whose every fetch was checked so carries `CHECKED_ON_ARRIVAL`; any other (dumb
 * HTTP, a conversion from Mercurial, Subversion or TFVC) is checked whole by `checkHistory`.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fsckLeniency, refusedOnlyDroppable } from './fsck-policy.ts';
import { GitFailed } from './git-command.ts';

/** The marker file in a raw repository whose objects were all checked on arrival. */
export const CHECKED_ON_ARRIVAL = 'import-checked-on-arrival';

/** `-c` options that make a fetch or clone check every object it receives, as `checkHistory` does. */
export const arrivalCheckArgs = (): string[] => [
  '-c',
  'fetch.fsckObjects=true',
  ...fsckLeniency('fetch.fsck').flatMap(([key, value]) => ['-c', `${key}=${value}`]),
];

/** The trace file of one fetch, in the job's private home (git appends every process's events). */
export const arrivalTracePath = (home: string): string => join(home, 'fetch-trace.json');

const OBJECT_WRITERS = new Set(['index-pack', 'unpack-objects']);

/**
 * Whether the fetch traced to `tracePath` checked everything it wrote (see the module comment).
 * The trace is removed: it holds the origin's URL.
 */
export async function checkedOnArrival(tracePath: string): Promise<boolean> {
  const text = await readFile(tracePath, 'utf8').catch(() => '');
  await rm(tracePath, { force: true });
  let writers = 0;
  for (const line of text.split('\n')) {
    if (!line.includes('"child_start"')) continue;
    let event: { event?: unknown; argv?: unknown };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      return false;
    }
    if (event.event !== 'child_start' || !Array.isArray(event.argv)) continue;
    const argv = event.argv.map(String);
    if (!OBJECT_WRITERS.has(argv[0] === 'git' ? (argv[1] ?? '') : (argv[0] ?? ''))) continue;
    writers += 1;
    if (!argv.some((arg) => arg === '--strict' || arg.startsWith('--strict='))) return false;
  }
  return writers > 0;
}

/** git's words when a fetch's object checks refused what arrived. */
export const refusedOnArrival = (stderr: string): boolean =>
  /^fatal: fsck error in (?:packed object|pack objects)|^error: object [0-9a-f]{40,64}: \w+: /m.test(stderr);

/** Records (or withdraws) that every object of the raw repository `repo` was checked on arrival. */
export async function markCheckedOnArrival(repo: string, checked: boolean): Promise<void> {
  const marker = join(repo, CHECKED_ON_ARRIVAL);
  if (checked) await writeFile(marker, 'fetch.fsckObjects\n');
  else await rm(marker, { force: true });
}

/**
 * Runs a fetch with its object checks; when they refused only an entry the history step drops (a
 * `.git` or `..` folder, a name holding `/`: `DROPPED_IN_HISTORY`), runs it again unchecked, so that the history step
 * checks the raw history whole, drops those entries and lists them. The answer is `checkedOnArrival`'s.
 */
export async function fetchChecked(fetch: (check: boolean) => Promise<boolean>): Promise<boolean> {
  try {
    return await fetch(true);
  } catch (error) {
    if (!(error instanceof GitFailed && !error.timedOut && refusedOnlyDroppable(error.stderr))) throw error;
    await fetch(false);
    return false;
  }
}
