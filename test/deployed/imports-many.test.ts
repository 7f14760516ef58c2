import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AsDeployed, startAsDeployed } from '#test/as-deployed';
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

/**
 * Twenty imports at once in the deployed project (issue 36, item 4): five distinct origins of each
 * of the four kinds started together, every workflow step the deployed function in its own
 * execution environment (a busy function gets another one, as Lambda scales), all on the one file
 * system under the access point's user, and the hosted repositories read through the Git front
 * end's task. Each import must complete and be the same as the same import run alone.
 */

const PER_KIND = 5;
const PASSWORD = 'deployed-many-1';

let deployed: AsDeployed;
let git: Awaited<ReturnType<typeof gitClient>>;
let client: ImportsClient;
let origins: ManyOrigins;
let work: string;

const refsOf = (repo: string) =>
  remoteRefs(git, `${withUser(deployed.stack.webUrl)}/octocat/${repo}.git`, PASSWORD);

beforeAll(async () => {
  deployed = await startAsDeployed();
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'deployed-many-'));
  origins = await makeManyOrigins(work, PER_KIND);
  const user = await createUser(deployed.stack.endpointsFile, 'octocat', PASSWORD);
  const token = await personalToken(deployed.stack.baseUrl, user.auth, ['repo']).catch(
    async (error: unknown) => {
      throw new Error(`${error}\n${await deployed.logs()}`);
    },
  );
  client = { baseUrl: deployed.stack.baseUrl, token: token.token, owner: 'octocat' };
}, 900_000);

afterAll(async () => {
  await origins?.close();
  await deployed?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('twenty imports of all four kinds at once, as deployed', () => {
  it('all complete, each as the same import alone', async () => {
    expect(new Set(origins.origins.map((origin) => origin.kind)).size).toBe(4);
    expect(origins.origins).toHaveLength(4 * PER_KIND);

    await Promise.all(
      origins.origins.map((origin) => startImport(client, `${origin.name}-many`, origin)),
    ).catch(async (error: unknown) => {
      throw new Error(`${error}\n${await deployed.logs()}`);
    });
    const together = await Promise.allSettled(
      origins.origins.map((origin) => untilComplete(client, `${origin.name}-many`, 900_000)),
    );
    const failed = together.flatMap((result) =>
      result.status === 'rejected' ? [String(result.reason)] : [],
    );
    if (failed.length > 0) throw new Error(`${failed.join('\n')}\n${await deployed.logs()}`);

    for (const origin of origins.origins) {
      await startImport(client, `${origin.name}-alone`, origin);
      await untilComplete(client, `${origin.name}-alone`, 300_000).catch(async (error: unknown) => {
        throw new Error(`${error}\n${await deployed.logs()}`);
      });
    }

    await expectEachAsAlone(client, origins, refsOf);
  }, 2_400_000);
});

/** The web origin as octocat (git asks the password of `gitClient`'s askpass). */
function withUser(url: string): string {
  const parsed = new URL(url);
  parsed.username = 'octocat';
  return parsed.toString().replace(/\/$/, '');
}
