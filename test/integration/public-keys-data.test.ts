import { beforeAll, describe, expect, it } from 'vitest';
import { parsePublicKey } from '#domain/public-keys';
import type { Repository } from '#domain/repositories';
import { freshTable } from '#test/dynamodb';
import { generateSshKey } from '#test/ssh-keys';

let data: typeof import('#data/public-keys');
let repositories: typeof import('#data/repositories');
let users: typeof import('#data/users');

/** A new public key as the handlers pass it to the data layer. */
const newKey = (clientId = '', title = 'laptop') => {
  const parsed = parsePublicKey(generateSshKey('ed25519').line);
  if (!parsed.valid) throw new Error(parsed.reason);
  return { key: parsed.key, fingerprint: parsed.fingerprint, title, clientId };
};

const target = (repository: Repository) => ({
  owner: repository.ownerLogin,
  repo: repository.name,
  repositoryId: repository.id,
});

/** A repository of `owner`, who is created first if needed (the owner's profile counts it). */
async function repository(owner: string, name: string): Promise<Repository> {
  await users.createUser({ login: owner, passwordHash: 'h' });
  const created = await repositories.createRepository({ ownerLogin: owner, name });
  if (!created) throw new Error(`repository ${owner}/${name} exists`);
  return created;
}

beforeAll(async () => {
  const table = await freshTable();
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = table.endpoint;
  data = await import('#data/public-keys');
  repositories = await import('#data/repositories');
  users = await import('#data/users');
});

describe('public keys data', () => {
  it('registers a public key once on the whole service: 1 of 10 concurrent creates wins', async () => {
    const repo = await repository('dana', 'site');
    const key = newKey();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 === 0
          ? data.createUserKey(`user${i}`, key)
          : data.createDeployKey(target(repo), { ...key, createdBy: 'dana', readOnly: true }),
      ),
    );
    expect(results.filter((r) => r.kind === 'created')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'key-taken')).toHaveLength(9);
    const stored = [
      ...(await Promise.all([0, 2, 4, 6, 8].map((i) => data.listUserKeys(`user${i}`)))).flat(),
      ...(await data.listDeployKeys('dana', 'site')),
    ];
    expect(stored.map((k) => k.key)).toEqual([key.key]);
  });

  it('creates, reads, lists in id order and deletes user keys; deleting frees the public key', async () => {
    const first = await data.createUserKey('Erin', newKey('', 'one'));
    const second = await data.createUserKey('erin', newKey('app9', 'two'));
    if (first.kind !== 'created' || second.kind !== 'created') throw new Error('not created');
    expect(second.key.id).toBeGreaterThan(first.key.id);
    expect(first.key).toMatchObject({ login: 'Erin', title: 'one', clientId: '' });
    expect(await data.getUserKey('ERIN', second.key.id)).toEqual(second.key);
    expect(await data.getUserKey('someone-else', second.key.id)).toBeUndefined();
    expect((await data.listUserKeys('erin')).map((k) => k.id)).toEqual([first.key.id, second.key.id]);

    expect(await data.deleteUserKey('erin', first.key.id)).toBe(true);
    expect(await data.deleteUserKey('erin', first.key.id)).toBe(false);
    expect((await data.listUserKeys('erin')).map((k) => k.id)).toEqual([second.key.id]);
    const again = await data.createUserKey('frank', {
      key: first.key.key,
      fingerprint: first.key.fingerprint,
      title: '',
      clientId: '',
    });
    expect(again.kind).toBe('created');
  });

  it('creates deploy keys only while the repository is the same one', async () => {
    const repo = await repository('gail', 'Tools');
    const key = newKey();
    const gone = await data.createDeployKey(
      { ...target(repo), repositoryId: repo.id + 1000 },
      { ...key, createdBy: 'gail', readOnly: false },
    );
    expect(gone.kind).toBe('repository-gone');
    const created = await data.createDeployKey(target(repo), { ...key, createdBy: 'gail', readOnly: true });
    expect(created).toMatchObject({
      kind: 'created',
      key: { owner: 'gail', repo: 'Tools', createdBy: 'gail', readOnly: true, fingerprint: key.fingerprint },
    });
    if (created.kind !== 'created') return;
    expect(await data.getDeployKey('GAIL', 'tools', created.key.id)).toEqual(created.key);
    expect(await data.getDeployKey('gail', 'other', created.key.id)).toBeUndefined();
    expect(await data.deleteDeployKey('gail', 'tools', created.key.id)).toBe(true);
    expect(await data.deleteDeployKey('gail', 'tools', created.key.id)).toBe(false);
    expect(await data.listDeployKeys('gail', 'tools')).toEqual([]);
  });

  it("deleteKeysCreatedByApp removes exactly that app's keys for that user and frees them", async () => {
    const repo = await repository('hana', 'deploy-me');
    const otherRepo = await repository('ivan', 'shared');
    const byApp1 = [newKey('app1'), newKey('app1')];
    const byApp1Deploy = newKey('app1');
    const kept = {
      app2: newKey('app2'),
      password: newKey(''),
      otherUser: newKey('app1'),
      otherUserDeploy: newKey('app1'),
    };
    for (const key of byApp1) expect((await data.createUserKey('hana', key)).kind).toBe('created');
    expect(
      (await data.createDeployKey(target(repo), { ...byApp1Deploy, createdBy: 'hana', readOnly: false }))
        .kind,
    ).toBe('created');
    expect((await data.createUserKey('hana', kept.app2)).kind).toBe('created');
    expect((await data.createUserKey('hana', kept.password)).kind).toBe('created');
    expect((await data.createUserKey('ivan', kept.otherUser)).kind).toBe('created');
    expect(
      (
        await data.createDeployKey(target(otherRepo), {
          ...kept.otherUserDeploy,
          createdBy: 'ivan',
          readOnly: false,
        })
      ).kind,
    ).toBe('created');

    expect(await data.deleteKeysCreatedByApp('Hana', 'app1')).toBe(3);

    expect((await data.listUserKeys('hana')).map((k) => k.key).sort()).toEqual(
      [kept.app2.key, kept.password.key].sort(),
    );
    expect(await data.listDeployKeys('hana', 'deploy-me')).toEqual([]);
    expect((await data.listUserKeys('ivan')).map((k) => k.key)).toEqual([kept.otherUser.key]);
    expect((await data.listDeployKeys('ivan', 'shared')).map((k) => k.key)).toEqual([
      kept.otherUserDeploy.key,
    ]);
    // The deleted keys' fingerprints are free again; the kept ones are still taken.
    for (const key of [...byApp1, byApp1Deploy])
      expect((await data.createUserKey('julia', { ...key, clientId: '' })).kind).toBe('created');
    for (const key of Object.values(kept))
      expect((await data.createUserKey('julia', { ...key, clientId: '' })).kind).toBe('key-taken');

    expect(await data.deleteKeysCreatedByApp('hana', 'app1')).toBe(0);
    expect(await data.deleteKeysCreatedByApp('hana', '')).toBe(0);
  });
});
