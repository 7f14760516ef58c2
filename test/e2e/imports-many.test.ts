import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import {
  expectEachAsAlone,
  type ImportsClient,
  type ManyOrigins,
  makeManyOrigins,
  startImport,
  untilComplete,
} from '#test/many-imports';
import { startTestStack } from '#test/stack';

/**
 * Twenty imports at once on the local stack (issue 36, item 4): five distinct origins of each of
 * the four kinds (Git, Subversion, Mercurial, TFVC) started together, every one complete and the
 * same, ref for ref, revision for revision, author for author and finding for finding, as the
 * same import run alone.
 */

const PER_KIND = 5;
const PASSWORD = 'many-pass-1';

let stack: Awaited<ReturnType<typeof startTestStack>>;
let git: Awaited<ReturnType<typeof gitClient>>;
let client: ImportsClient;
let origins: ManyOrigins;
let work: string;

const refsOf = (repo: string) => remoteRefs(git, `${withUser(stack.webUrl)}/octocat/${repo}.git`, PASSWORD);

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'imports-many-'));
  origins = await makeManyOrigins(work, PER_KIND);
  const user = await createUser(stack.endpointsFile, 'octocat', PASSWORD);
  client = {
    baseUrl: stack.baseUrl,
    token: (await personalToken(stack.baseUrl, user.auth, ['repo'])).token,
    owner: 'octocat',
  };
}, 300_000);

afterAll(async () => {
  await origins?.close();
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('twenty imports of all four kinds at once', () => {
  it('all complete, each as the same import alone', async () => {
    expect(new Set(origins.origins.map((origin) => origin.kind)).size).toBe(4);
    expect(origins.origins).toHaveLength(4 * PER_KIND);

    // Together: every import started before any is awaited.
    await Promise.all(origins.origins.map((origin) => startImport(client, `${origin.name}-many`, origin)));
    const together = await Promise.allSettled(
      origins.origins.map((origin) => untilComplete(client, `${origin.name}-many`, 600_000)),
    );
    const failed = together.flatMap((result) =>
      result.status === 'rejected' ? [String(result.reason)] : [],
    );
    expect(failed).toEqual([]);

    // Alone: one import at a time, from the same origins.
    for (const origin of origins.origins) {
      await startImport(client, `${origin.name}-alone`, origin);
      await untilComplete(client, `${origin.name}-alone`, 120_000);
    }

    await expectEachAsAlone(client, origins, refsOf);
  }, 1_500_000);
});

/** The web origin as octocat (git asks the password of `gitClient`'s askpass). */
function withUser(url: string): string {
  const parsed = new URL(url);
  parsed.username = 'octocat';
  return parsed.toString().replace(/\/$/, '');
}
