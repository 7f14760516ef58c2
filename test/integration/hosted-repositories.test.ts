import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { freshTable } from '#test/dynamodb';
import { hostedRepositoryPath, lfsObjectPath } from '#vcs/hosted-paths';
import { LfsObjectMismatch, localLfsStore } from '#vcs/lfs-store';

let repositories: typeof import('#data/repositories');
let users: typeof import('#data/users');
let client: typeof import('#data/client');
let keys: typeof import('#data/keys');

beforeAll(async () => {
  const table = await freshTable();
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = table.endpoint;
  repositories = await import('#data/repositories');
  users = await import('#data/users');
  client = await import('#data/client');
  keys = await import('#data/keys');
  await users.createUser({ login: 'pusher', passwordHash: 'h' });
});

describe('recordPush', () => {
  it('sets pushedAt, size and hasContent; a new repository has no content', async () => {
    const created = await repositories.createRepository({ ownerLogin: 'pusher', name: 'plain' });
    expect(created?.hasContent).toBe(false);
    const recorded = await repositories.recordPush('Pusher', 'PLAIN', { size: 42, hasContent: true });
    expect(recorded).toMatchObject({ name: 'plain', size: 42, hasContent: true });
    expect(await repositories.getRepository('pusher', 'plain')).toMatchObject({ size: 42, hasContent: true });
    // No import item: none is created.
    const { Item } = await client
      .db()
      .send(new GetCommand({ TableName: client.tableName(), Key: keys.importKey('pusher', 'plain') }));
    expect(Item).toBeUndefined();
  });

  it("marks the repository's import as pushed to by its owner", async () => {
    await repositories.createRepository({ ownerLogin: 'pusher', name: 'imported' });
    const key = keys.importKey('pusher', 'imported');
    await client
      .db()
      .send(new PutCommand({ TableName: client.tableName(), Item: { ...key, status: 'complete' } }));
    await repositories.recordPush('pusher', 'imported', { size: 1, hasContent: true });
    const { Item } = await client.db().send(new GetCommand({ TableName: client.tableName(), Key: key }));
    expect(Item).toMatchObject({ status: 'complete', ownerPushed: true });
  });

  it('does not recreate a repository that no longer exists', async () => {
    expect(await repositories.recordPush('pusher', 'gone', { size: 1, hasContent: true })).toBeUndefined();
    expect(await repositories.getRepository('pusher', 'gone')).toBeUndefined();
  });
});

describe('local LFS store', () => {
  const content = Buffer.from('large file content\n');
  const oid = createHash('sha256').update(content).digest('hex');

  it('puts a verified file where git-lfs keeps it, and refuses one that does not hash to its oid', async () => {
    const root = await mkdtemp(join(tmpdir(), 'lfs-store-'));
    const store = localLfsStore(root);
    const file = join(root, 'source');
    await writeFile(file, content);
    expect(await store.has('Owner', 'repo', oid)).toBeUndefined();
    await store.put('Owner', 'repo', oid, file);
    expect(await store.has('owner', 'REPO', oid)).toEqual({ size: content.length });
    const stored = lfsObjectPath(hostedRepositoryPath(root, 'owner', 'repo'), oid);
    expect(await readFile(stored)).toEqual(content);
    await expect(store.put('owner', 'repo', 'a'.repeat(64), file)).rejects.toBeInstanceOf(LfsObjectMismatch);
    for (const announced of [content.length + 1, content.length - 1])
      await expect(
        store.write('owner', 'repo', 'b'.repeat(64), Readable.from([content]), announced),
      ).rejects.toBeInstanceOf(LfsObjectMismatch);
    await expect(
      store.write('owner', 'repo', 'b'.repeat(64), Readable.from([content])),
    ).rejects.toBeInstanceOf(LfsObjectMismatch);
    expect(await store.has('owner', 'repo', 'b'.repeat(64))).toBeUndefined();
    // A stream in pieces, of an object already there: stored again, the same bytes.
    await store.write(
      'owner',
      'repo',
      oid,
      Readable.from([content.subarray(0, 5), content.subarray(5)]),
      content.length,
    );
    const opened = await store.open('owner', 'repo', oid);
    expect(opened?.size).toBe(content.length);
    expect(await buffer(opened?.stream ?? Readable.from([]))).toEqual(content);
    await expect(store.open('owner', 'repo', '../../x'.padEnd(64, 'a'))).rejects.toBeInstanceOf(
      LfsObjectMismatch,
    );
  });

  it('points actions at the object route, with the Authorization the action is given', async () => {
    const store = localLfsStore('/unused');
    const href = `https://web.example/owner/repo.git/info/lfs/objects/${oid}`;
    expect(await store.downloadAction('owner', 'repo', oid, { webUrl: 'https://web.example' })).toEqual({
      href,
      header: { Accept: 'application/octet-stream' },
    });
    expect(
      await store.uploadAction('owner', 'repo', oid, 19, {
        webUrl: 'https://web.example',
        authorization: 'RemoteAuth t',
      }),
    ).toEqual({
      href: `${href}?size=19`,
      header: { 'Content-Type': 'application/octet-stream', Authorization: 'RemoteAuth t' },
    });
  });
});
