/**
 * Subversion imports that fail for real: a revision the origin cannot read, an origin whose
 * connection drops in the middle of the history, and a mirror revision the converter cannot read
 * (svn-all-fast-export then feeds git fast-import a broken stream: fast-import's words are shown).
 * The error the adapter throws (the import's `error_message`) names the step, the revision (and
 * the path where the tool says it) and the tool's own words, never a local path.
 *
 * The history is git's `t9151` dump (test/fixtures/svn/README.md): 44 revisions, served by one
 * svnserve on 127.0.0.1; revision 20 changes `branches/left/glurpp` and nothing else.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, open, rm, stat } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { rawJobs } from '#test/raw-jobs';
import { OriginFailed } from '#vcs/origin';
import { subversionAdapter } from '#vcs/subversion/adapter';

const exec = promisify(execFile);
const DUMP = join(import.meta.dirname, '..', 'fixtures', 'svn', 'git-t9151-svn-mergeinfo.dump');

let root: string;
let server: SvnServer;
let relay: Server;
const job = rawJobs(() => root);

/** Overwrites the first bytes of revision 20's file content ("eee_yow") in a repository's rev file. */
async function corruptRevision20(repo: string): Promise<void> {
  const file = join(repo, 'db', 'revs', '0', '20');
  await chmod(file, 0o644);
  const handle = await open(file, 'r+');
  try {
    const head = Buffer.alloc(64);
    await handle.read(head, 0, 64, 0);
    const at = head.indexOf('eee_yow');
    if (at < 0) throw new Error('revision 20 is not as expected');
    await handle.write(Buffer.from('XXXXXXX'), 0, 7, at);
  } finally {
    await handle.close();
  }
}

/** A relay to svnserve that closes each connection after `limit` bytes from the server. */
async function droppingRelay(port: number, limit: number): Promise<Server> {
  const relayServer = createServer((client) => {
    const upstream = createConnection(port, '127.0.0.1');
    let sent = 0;
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      const room = limit - sent;
      sent += chunk.length;
      if (room > 0) client.write(chunk.subarray(0, room));
      if (sent >= limit) {
        client.destroy();
        upstream.destroy();
      }
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => relayServer.listen(0, '127.0.0.1', resolve));
  return relayServer;
}

const failure = async (promise: Promise<unknown>): Promise<Error> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof Error)) throw new Error('the import did not fail');
  return error;
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svn-failures-'));
  for (const name of ['whole', 'broken']) {
    const repo = join(root, 'repos', name);
    await mkdir(repo, { recursive: true });
    await exec('svnadmin', ['create', repo]);
    await exec('sh', ['-c', 'svnadmin load -q "$1" < "$2"', 'sh', repo, DUMP]);
  }
  await corruptRevision20(join(root, 'repos', 'broken'));
  server = await serveSvn(join(root, 'repos'));
  relay = await droppingRelay(server.port, 12_000);
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => relay?.close(resolve));
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('Subversion import failures', () => {
  it('names the revision the origin could not send, in its own words', async () => {
    const raw = await job(server.url('broken'));
    const error = await failure(subversionAdapter().importRawChunk(raw, 600_000, () => {}));
    expect(error).toBeInstanceOf(OriginFailed);
    expect(error.message).toMatch(/^Fetching revision 20 from the origin failed: svnrdump: E\d{6}: \S/);
    expect(error.message).not.toContain(root);
  });

  it('names the revision where the origin dropped the connection', async () => {
    const raw = await job(`svn://127.0.0.1:${(relay.address() as { port: number }).port}/whole`);
    const error = await failure(subversionAdapter().importRawChunk(raw, 600_000, () => {}));
    expect(error).toBeInstanceOf(OriginFailed);
    const match = /^Fetching revision (\d+) from the origin failed: svnrdump: E\d{6}: (.*)$/.exec(
      error.message,
    );
    expect(match?.[2]).toMatch(/Network connection closed unexpectedly/);
    expect(Number(match?.[1])).toBeGreaterThan(1);
    expect(Number(match?.[1])).toBeLessThanOrEqual(44);
  });

  it('names the revision and the path the converter could not read', async () => {
    const raw = await job(server.url('whole'));
    // One step per chunk, ten revisions a step: the mirror fills, then revisions 1-10 are converted.
    const adapter = subversionAdapter({
      svnPlan: { wholeMinBudgetMs: Number.MAX_SAFE_INTEGER, firstRevs: 10, growth: 1 },
    });
    const converted = join(raw.workDir, 'raw.git', 'HEAD');
    for (let chunks = 0; !(await stat(converted).catch(() => undefined)); chunks++) {
      if (chunks > 10) throw new Error('the conversion did not start');
      expect((await adapter.importRawChunk(raw, 1, () => {})).done).toBe(false);
    }
    await corruptRevision20(join(raw.workDir, 'raw.svn'));
    const error = await failure(adapter.importRawChunk(raw, 1, () => {}));
    expect(error).toBeInstanceOf(OriginFailed);
    expect(error.message).toMatch(
      /^Converting the Subversion history failed at revision 20 \(\/branches\/left\/\): \S/,
    );
    expect(error.message).not.toContain(raw.workDir);
  });
});
