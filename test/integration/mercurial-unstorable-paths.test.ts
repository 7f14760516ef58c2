/**
 * A Mercurial history with paths Git cannot store fails, and the failure names the step, the
 * changeset and the path, never the service's own directories. The history is Mercurial's own
 * `tampered` test bundle (test/fixtures/hg/README.md): `.hg/test` and `foo/.hg/test` (Git stores
 * them), a symlink `back` beside `back/test`, `../test` and `/tmp/test`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OriginServer } from '#local/git-origins';
import { serveHg } from '#local/hg-origins';
import { mercurialAdapter } from '#vcs/mercurial/adapter';

const exec = promisify(execFile);
const BUNDLE = join(import.meta.dirname, '../fixtures/hg/tampered.hg');

let root: string;
let work: string;
const origins: OriginServer[] = [];

/** The bundle's changeset `node` and its ancestors (all five when absent), served over HTTP. */
async function serveTampered(name: string, node?: string): Promise<OriginServer> {
  const env = { PATH: process.env.PATH, HOME: root, HGRCPATH: '', HGPLAIN: '1' };
  const repo = join(root, name);
  await exec('hg', ['init', repo], { env });
  await exec('hg', ['-R', repo, 'pull', '-q', ...(node === undefined ? [] : ['-r', node]), BUNDLE], { env });
  const origin = await serveHg({ repo });
  origins.push(origin);
  return origin;
}

async function importFailure(url: string): Promise<Error> {
  const adapter = mercurialAdapter();
  const workDir = await mkdtemp(join(work, 'job-'));
  const raw = { url, allowedAddresses: ['127.0.0.1'], workDir };
  try {
    for (let chunk = 0; chunk < 10; chunk += 1)
      if ((await adapter.importRawChunk(raw, 60_000, () => undefined)).done) break;
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error;
  }
  throw new Error('the import did not fail');
}

const noLocalPath = (message: string) => {
  expect(message).not.toContain(work);
  expect(message).not.toContain(root);
  expect(message).not.toContain(tmpdir());
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hg-tampered-'));
  work = await mkdtemp(join(tmpdir(), 'hg-tampered-work-'));
}, 30_000);

afterAll(async () => {
  for (const origin of origins) await origin.close();
  await rm(root, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('Mercurial paths Git cannot store', () => {
  it('fails at the first such changeset, naming it and the path: a file beneath a file', async () => {
    const error = await importFailure((await serveTampered('all')).url);
    expect(error.name).toBe('OriginFailed');
    expect(error.message).toBe(
      'Converting the Mercurial history to Git failed: changeset 4d3561dc450d (revision 2) has a path Git cannot store: "back/test" (beneath the file "back")',
    );
    noLocalPath(error.message);
  }, 30_000);

  it('names a path that climbs out of the repository', async () => {
    const error = await importFailure((await serveTampered('up', '40f5112af0dd')).url);
    expect(error.message).toBe(
      'Converting the Mercurial history to Git failed: changeset 40f5112af0dd (revision 0) has a path Git cannot store: "../test"',
    );
  }, 30_000);

  it('names an absolute path', async () => {
    const error = await importFailure((await serveTampered('absolute', 'fc1393d727bc')).url);
    expect(error.message).toBe(
      'Converting the Mercurial history to Git failed: changeset fc1393d727bc (revision 0) has a path Git cannot store: "/tmp/test"',
    );
  }, 30_000);
});
