import { lstatSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OriginServer } from '#local/git-origins';
import { makeHgBulkRepository, serveHg } from '#local/hg-origins';
import { faultPlan } from '#local/lambda-faults';
import { type AsDeployed, startAsDeployed } from '#test/as-deployed';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importToTheEnd } from '#test/import-to-end';

/*
 * A worker killed while its hg holds the lock of the attempt's clone (issue 36): the raw step of a
 * Mercurial import loses its execution environment, PID namespace and all, at the moment
 * `raw.hg/.hg/store/lock` exists (hg's symbolic link naming its holder as
 * `host/pid-namespace:pid`, a namespace that is gone with the sandbox). The retry must not wait
 * for a holder it cannot test, and the import ends as the same import without the death.
 */

const PASSWORD = 'dead-locks-1';
const faults = faultPlan();
let deployed: AsDeployed;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;
let origin: OriginServer;

const present = (path: string) => lstatSync(path, { throwIfNoEntry: false }) !== undefined;

async function imported(name: string) {
  const last = await importToTheEnd(deployed.stack.baseUrl, token, {
    owner: 'octocat',
    name,
    body: { vcs_url: origin.url, vcs: 'mercurial' },
    timeoutMs: 300_000,
  });
  expect(last.status, `${JSON.stringify(last)}\n${await deployed.logs()}`).toBe('complete');
  const hosted = new URL(`${deployed.stack.webUrl}/octocat/${name}.git`);
  hosted.username = 'octocat';
  return remoteRefs(git, hosted.toString(), PASSWORD);
}

beforeAll(async () => {
  deployed = await startAsDeployed({ faults });
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'deployed-dead-locks-'));
  await makeHgBulkRepository(join(work, 'hg'), { revisions: 3000, branchRevisions: 200 });
  origin = await serveHg({ repo: join(work, 'hg') });
  const user = await createUser(deployed.stack.endpointsFile, 'octocat', PASSWORD);
  token = (await personalToken(deployed.stack.baseUrl, user.auth, ['repo'])).token;
}, 900_000);

afterAll(async () => {
  faults.clear();
  await origin?.close();
  await deployed?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a raw step killed while its hg holds the clone’s lock', () => {
  it('is retried past the dead holder’s lock and ends as the import without the death', async () => {
    const expected = await imported('hg-calm');
    const lock = join(
      deployed.fileSystem,
      'imports',
      'octocat',
      'hg-locked',
      '1',
      'raw.hg',
      '.hg',
      'store',
      'lock',
    );
    const fault = faults.inject({
      fn: 'ImportRawHistory',
      when: 'mid-work',
      match: (event) => (event as { repo?: string }).repo === 'hg-locked',
      once: () => present(lock),
    });
    const refs = await imported('hg-locked');
    expect(fault.death()?.during, fault.missed()).toBe('the moment the test waited for');
    expect(refs).toEqual(expected);
  }, 900_000);
});
