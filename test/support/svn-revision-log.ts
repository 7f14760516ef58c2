/**
 * A Subversion import's revision map checked against `svn log -v` of its origin (issue 35,
 * item 1), for the e2e tests of imports and syncs:
 *
 * - every revision that changes trunk, a branch or a tag names the commit that revision made: its
 *   message and author date are the revision's, and its files are `svn export` of that folder at
 *   that revision (trunk when it changed several; `.gitignore`, which carries `svn:ignore`, set
 *   apart);
 * - a revision that made no commit (it only copied whole branches or tags, or deleted them) names
 *   the commit that holds its state: the copied folder's files at that revision, or the deleted
 *   folder's just before it.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { decodeXml } from '#vcs/subversion/command';

const exec = promisify(execFile);

interface Change {
  readonly action: string;
  readonly kind: string;
  readonly path: string;
  /** The path it was copied from, if it was. */
  readonly from?: string;
}
export interface LogEntry {
  readonly revision: number;
  readonly date: string;
  readonly message: string;
  readonly changes: readonly Change[];
}

export interface Expected {
  readonly revision: number;
  /** The folder whose files the mapped commit holds, and at which revision. */
  readonly folder: string;
  readonly at: number;
  /** Whether the revision made a commit (else it names the commit holding what it deleted). */
  readonly made: boolean;
  readonly entry: LogEntry;
}

/** `svn log -v --xml` of a repository URL, oldest first. */
export async function svnLog(url: string, home: string): Promise<LogEntry[]> {
  const { stdout } = await exec('svn', ['log', '-v', '--xml', '--non-interactive', url], {
    env: { PATH: process.env.PATH, HOME: home, LC_ALL: 'C' },
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...stdout.matchAll(/<logentry\s+revision="(\d+)">([\s\S]*?)<\/logentry>/g)]
    .map(([, revision = '', body = '']) => ({
      revision: Number(revision),
      date: /<date>([^<]*)<\/date>/.exec(body)?.[1] ?? '',
      message: decodeXml(/<msg>([\s\S]*?)<\/msg>/.exec(body)?.[1] ?? ''),
      changes: [...body.matchAll(/<path\b([^>]*)>([^<]*)<\/path>/g)].map(
        ([, attributes = '', path = '']) => ({
          action: /\baction="(\w)"/.exec(attributes)?.[1] ?? '',
          kind: /\bkind="(\w*)"/.exec(attributes)?.[1] ?? '',
          path: decodeXml(path),
          from: decodeXml(/\bcopyfrom-path="([^"]*)"/.exec(attributes)?.[1] ?? '') || undefined,
        }),
      ),
    }))
    .sort((a, b) => a.revision - b.revision);
}

/** The branch or tag folder (`trunk`, `branches/X`, `tags/X`) a changed path is in, if any. */
const folderOf = (change: Change): string | undefined => {
  const match = /^\/(trunk|(?:branches|tags)\/[^/]+)(\/.*)?$/.exec(change.path);
  if (match === null) return undefined;
  // A file straight under branches/ or tags/ is no branch or tag.
  if (match[1] !== 'trunk' && match[2] === undefined && change.kind === 'file') return undefined;
  return match[1];
};

const REF_FOLDER = /^\/(?:trunk|(?:branches|tags)\/[^/]+)$/;

/**
 * What the map must hold, from the log alone: each revision touching a branch or tag folder,
 * with the folder (trunk first, else the first it touched that still exists). It made a commit
 * unless all it did was copy whole branches or tags (trunk, `branches/X`, `tags/X`) to new
 * folders, with nothing changed inside, or delete whole folders (a property change alone makes
 * one, with no change to the files). Then it names the commit that holds its state: the first
 * folder it copied, else the first it deleted, as it was just before.
 */
export function expectedMap(log: readonly LogEntry[]): Expected[] {
  return log.flatMap((entry): Expected[] => {
    const touched = entry.changes.flatMap((change) => {
      const folder = folderOf(change);
      return folder === undefined ? [] : [{ folder, change }];
    });
    if (touched.length === 0) return [];
    const whole = (t: { folder: string; change: Change }) => t.change.path === `/${t.folder}`;
    const kept = touched.filter((t) => !(whole(t) && t.change.action === 'D'));
    const folders = new Set(kept.map((t) => t.folder));
    const copiedOnly = [...folders].every((folder) => {
      const inside = kept.filter((t) => t.folder === folder);
      const only = inside[0];
      return (
        inside.length === 1 && only !== undefined && whole(only) && REF_FOLDER.test(only.change.from ?? '')
      );
    });
    const pick = (from: readonly { folder: string }[]) =>
      from.find((t) => t.folder === 'trunk')?.folder ?? from[0]?.folder ?? '';
    if (kept.length === 0)
      return [
        { revision: entry.revision, folder: pick(touched), at: entry.revision - 1, made: false, entry },
      ];
    return [{ revision: entry.revision, folder: pick(kept), at: entry.revision, made: !copiedOnly, entry }];
  });
}

/** Every file under `dir` → its content, `.git` and `.gitignore` left out. */
async function filesUnder(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (at: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      if (entry.name === '.git' || entry.name === '.gitignore') continue;
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else out[relative(dir, path)] = await readFile(path, 'utf8');
    }
  };
  await walk(dir);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

export interface MapCheck {
  /** The map as the API lists it: origin revision → commit. */
  readonly map: ReadonlyMap<number, string>;
  /** A local clone (`--mirror`) of the hosted repository. */
  readonly clone: string;
  /** The origin's `file://` URL (the same repository the import read). */
  readonly originUrl: string;
  /** A scratch directory (also HOME for git and svn). */
  readonly work: string;
  /** The revisions expected, when not every one `expectedMap` lists. */
  readonly only?: (expected: Expected) => boolean;
  /** A label for failures. */
  readonly name: string;
}

/** The map holds exactly the expected revisions, each naming a commit as the module says. */
export async function expectMapFollowsLog(check: MapCheck): Promise<void> {
  const env = { PATH: process.env.PATH, HOME: check.work, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1' };
  const expected = expectedMap(await svnLog(check.originUrl, check.work)).filter(check.only ?? (() => true));
  expect([...check.map.keys()], check.name).toEqual(expected.map((want) => want.revision));
  for (const want of expected) {
    const commit = check.map.get(want.revision) ?? '';
    const where = `${check.name} r${want.revision} ${want.folder}`;
    const shown = await exec('git', ['-C', check.clone, 'show', '-s', '--format=%at%n%B', commit], { env });
    const [seconds = '', ...message] = shown.stdout.split('\n');
    if (want.made) {
      expect(message.join('\n').trimEnd(), where).toBe(want.entry.message.trimEnd());
      expect(Number(seconds), where).toBe(Math.floor(Date.parse(want.entry.date) / 1000));
    }
    const dir = await mkdtemp(join(check.work, 'tree-'));
    const [hosted, origin] = [join(dir, 'hosted'), join(dir, 'origin')];
    await mkdir(hosted);
    await exec('git', ['-C', check.clone, 'archive', '--format=tar', '-o', join(dir, 'hosted.tar'), commit], {
      env,
    });
    await exec('tar', ['-xf', join(dir, 'hosted.tar'), '-C', hosted]);
    await exec(
      'svn',
      ['export', '--quiet', '--non-interactive', `${check.originUrl}/${want.folder}@${want.at}`, origin],
      { env },
    );
    expect(await filesUnder(hosted), where).toEqual(await filesUnder(origin));
  }
}
