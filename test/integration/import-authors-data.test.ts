import { beforeAll, describe, expect, it } from 'vitest';
import type { ImportAuthor } from '#domain/imports';
import { freshTable } from '#test/dynamodb';

/*
 * The authors an import finds, against DynamoDB Local: a chunk's new authors are one id
 * reservation and one transaction, ids one after the other; an author already there (a repeated
 * chunk, another writer) is not added twice; a superseded attempt adds nothing.
 */

let progress: typeof import('#data/imports/progress');
let items: typeof import('#data/imports/items');
let client: typeof import('#data/client');
let seed: typeof import('#test/import-seed');
let repositories: typeof import('#data/repositories');
let requests: typeof import('#data/imports/requests');
const calls: string[] = [];

const author = (name: string): Omit<ImportAuthor, 'id'> => ({
  remoteId: `${name} <${name.toLowerCase()}@example.com>`,
  remoteName: name,
  name,
  email: `${name.toLowerCase()}@example.com`,
});

beforeAll(async () => {
  const table = await freshTable();
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = table.endpoint;
  progress = await import('#data/imports/progress');
  items = await import('#data/imports/items');
  client = await import('#data/client');
  seed = await import('#test/import-seed');
  repositories = await import('#data/repositories');
  requests = await import('#data/imports/requests');
  await (await import('#data/users')).createUser({ login: 'octocat', passwordHash: 'h' });
  client.db().middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'countAuthorCalls' },
  );
});

describe('import authors', () => {
  it('adds a chunk’s new authors with one id reservation and one transaction, ids one after the other', async () => {
    await repositories.createRepository({ ownerLogin: 'octocat', name: 'authors' });
    const { importId, attempt } = await seed.seedImport('octocat', 'authors');

    calls.length = 0;
    expect(
      await progress.addAuthors(
        'octocat',
        'authors',
        importId,
        attempt,
        ['Ada', 'Grace', 'Linus'].map(author),
      ),
    ).toBe(3);
    expect(calls).toEqual(['UpdateItemCommand', 'TransactWriteItemsCommand']);
    const listed = await items.listAuthors('octocat', 'authors', importId);
    expect(listed.map((found) => found.name)).toEqual(['Ada', 'Grace', 'Linus']);
    const ids = listed.map((found) => found.id);
    expect(ids).toEqual([ids[0], (ids[0] ?? 0) + 1, (ids[0] ?? 0) + 2]);

    // One known, one new: the new one only, with the next id; the known one stays as it was.
    expect(
      await progress.addAuthors('octocat', 'authors', importId, attempt, [
        author('Grace'),
        author('Margaret'),
      ]),
    ).toBe(1);
    const again = await items.listAuthors('octocat', 'authors', importId);
    expect(again.map((found) => found.name)).toEqual(['Ada', 'Grace', 'Linus', 'Margaret']);
    expect(again[1]).toEqual(listed[1]);
    expect((await items.getImport('octocat', 'authors'))?.authorsCount).toBe(4);
    expect(await progress.addAuthors('octocat', 'authors', importId, attempt, [author('Ada')])).toBe(0);

    // An attempt no longer current adds nothing.
    await requests.beginAttempt('octocat', 'authors', { attempt, status: 'importing' }, 'importing');
    expect(await progress.addAuthors('octocat', 'authors', importId, attempt, [author('Ken')])).toBe(false);
    expect(
      (await items.listAuthors('octocat', 'authors', importId)).map((found) => found.name),
    ).not.toContain('Ken');
  });
});
