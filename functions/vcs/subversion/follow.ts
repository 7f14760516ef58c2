/**
 * Following a Subversion origin after its import (issue 27): a sync reopens the finished working
 * directory, keeping the mirror `raw.svn`, svn-all-fast-export's resume files (`log-raw.git` in
 * the directory, its marks in `raw.git`), the rules and the history scan's tally, so the next
 * chunks mirror, scan and convert only the revisions after the last. None of them holds an
 * absolute path: the directory moves to the sync's attempt.
 *
 * Before it continues, the first chunk checks that the origin still has the history mirrored (the
 * same repository UUID and project path, at least as many revisions, the last mirrored revision's
 * date, log message and author unchanged). An origin re-created by `svnadmin load` of another
 * history fails that check: the directory is emptied and the sync imports the whole origin afresh.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { rawRepositoryPath, startAfresh } from '../origin.ts';
import { decodeXml, runSvn } from './command.ts';
import { NO_AUTHOR } from './history-findings.ts';
import type { RemoteSvn } from './mirror.ts';
import { DEFAULT_SVN_CHUNK_PLAN, type SvnOrigin, type SvnState, svnCursor } from './state.ts';

/** svn-all-fast-export's name for its output repository, which its resume files carry. */
const OUTPUT_NAME = 'raw.git';

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * The adapter's `reopen`: a finished import that kept its resume files is marked to be followed;
 * anything else (an import that did not finish, or one from before resume files were kept) starts
 * afresh. Repeated safely.
 */
export async function reopenMirror(workDir: string): Promise<void> {
  const cursor = svnCursor('whole', DEFAULT_SVN_CHUNK_PLAN);
  const state = await cursor.load(workDir);
  const resumable =
    state.origin !== null &&
    (state.done || state.following) &&
    typeof state.scanned === 'number' &&
    (await exists(join(workDir, `log-${OUTPUT_NAME}`))) &&
    (await exists(join(rawRepositoryPath(workDir), `marks-${OUTPUT_NAME}`)));
  if (!resumable) return startAfresh(workDir);
  state.done = false;
  state.following = true;
  state.percent = 0;
  await cursor.save(workDir, state);
}

/** The revision properties a replaced revision would change. */
const COMPARED = ['svn:date', 'svn:log', 'svn:author'] as const;

/**
 * Whether the origin `now` (its `svn info`) still holds the history of the mirror, as far as one
 * cheap look tells: the same repository and path, not fewer revisions, and the last mirrored
 * revision's properties the same at both ends (one `svn proplist` each; with `--revprop` the URL
 * only names the repository, and svn reads no peg revision in it).
 */
export async function historyKept(
  state: SvnState,
  now: SvnOrigin,
  mirror: string,
  home: string,
  remote: RemoteSvn,
  originUrl: string,
): Promise<boolean> {
  const before = state.origin;
  if (before === null || before.uuid !== now.uuid || before.path !== now.path) return false;
  if (now.youngest < state.loaded) return false;
  if (state.loaded === 0) return true;
  const args = (url: string) => [
    'proplist',
    '--revprop',
    '-v',
    '--xml',
    '-r',
    String(state.loaded),
    '--',
    url,
  ];
  const [theirs, ours] = await Promise.all([
    remote('svn', args(originUrl), 120_000),
    runSvn('svn', args(pathToFileURL(mirror).href), { cwd: home, home, timeoutMs: 60_000 }),
  ]);
  const a = revisionProps(theirs.toString('utf8'));
  const b = revisionProps(ours.toString('utf8'));
  return COMPARED.every((name) => a.get(name) === b.get(name));
}

/**
 * The compared properties of `svn proplist --xml`, as the mirror stores them: line endings made
 * LF (`svnadmin load --normalize-props`), a missing author named as the history scan names it.
 */
function revisionProps(xml: string): Map<string, string> {
  const props = new Map<string, string>();
  for (const [, name = '', encoding, value = ''] of xml.matchAll(
    /<property\s+name="([^"]*)"(?:\s+encoding="([^"]*)")?\s*>([^<]*)<\/property>/g,
  )) {
    const text = encoding === 'base64' ? Buffer.from(value, 'base64').toString('utf8') : decodeXml(value);
    props.set(decodeXml(name), text.replace(/\r\n?/g, '\n'));
  }
  if ((props.get('svn:author') ?? '') === '') props.set('svn:author', NO_AUTHOR);
  return props;
}
