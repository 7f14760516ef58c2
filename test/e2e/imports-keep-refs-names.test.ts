import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getImport } from '#data/imports/items';
import { enterStatus } from '#data/imports/progress';
import { getImportSync } from '#data/imports/sync';
import { createUser } from '#test/fixtures';
import { createRepository } from '#test/import-seed';
import { startTestStack } from '#test/stack';
import { signedIn } from '#test/web-client';

/*
 * Issue 37, item 6: `keep_deleted_refs` named two settings with two defaults (the import's choice
 * for refs deleted in the Subversion history, true; the sync's for refs the origin deletes while
 * followed, false), and the progress page showed both under that one name. Each now has its own
 * name (decision 0150); the old one still works where it worked, as a deprecated alias.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type User = Awaited<ReturnType<typeof createUser>>;
let stack: Stack;
let owner: User;

const IDLE = fileURLToPath(new URL('../fixtures/import-idle.asl.json', import.meta.url));
const PREVIEW = 'application/vnd.github.barred-rock-preview';
const ORIGIN = 'http://127.0.0.1:9/origin.git';

beforeAll(async () => {
  stack = await startTestStack({ importStateMachine: { name: 'Import', definitionFile: IDLE, tasks: {} } });
  owner = await createUser(stack.endpointsFile, 'keeper', 'keeper-pass-1');
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { Authorization: owner.auth, Accept: PREVIEW },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : JSON.parse(text) };
}

let count = 0;
/** A repository of the owner with an import started with `choices` (the idle workflow leaves it). */
async function started(choices: Record<string, unknown> = {}) {
  const repo = `kept-${++count}`;
  await createRepository(stack.baseUrl, owner.login, owner.password, repo);
  const response = await api('PUT', `/repos/${owner.login}/${repo}/import`, {
    vcs_url: ORIGIN,
    vcs: 'git',
    ...choices,
  });
  return { repo, response };
}

const reportChoices = async (repo: string) =>
  (await api('GET', `/repos/${owner.login}/${repo}/import/report`)).body.choices;

async function complete(repo: string) {
  const record = await getImport(owner.login, repo);
  if (!record) throw new Error('no import');
  await enterStatus(owner.login, repo, record.attempt, 'complete');
}

describe('the two keep_… settings for deleted refs', () => {
  it('the import choice is keep_refs_deleted_in_history (default true); keep_deleted_refs is its alias; both differing is 422 with nothing started', async () => {
    const defaults = await started();
    expect(defaults.response.status).toBe(201);
    expect(await reportChoices(defaults.repo)).toEqual({
      keep_empty_directories: false,
      keep_refs_deleted_in_history: true,
      keep_deleted_refs: true,
    });

    const named = await started({ keep_refs_deleted_in_history: false });
    expect(named.response.status).toBe(201);
    expect(await reportChoices(named.repo)).toMatchObject({
      keep_refs_deleted_in_history: false,
      keep_deleted_refs: false,
    });
    const aliased = await started({ keep_deleted_refs: false });
    expect(aliased.response.status).toBe(201);
    expect(await reportChoices(aliased.repo)).toMatchObject({ keep_refs_deleted_in_history: false });
    const same = await started({ keep_deleted_refs: false, keep_refs_deleted_in_history: false });
    expect(same.response.status).toBe(201);

    const both = await started({ keep_deleted_refs: true, keep_refs_deleted_in_history: false });
    expect(both.response.status).toBe(422);
    expect(both.response.body).toMatchObject({
      message: 'Validation Failed',
      errors: [{ resource: 'Import', field: 'keep_deleted_refs', code: 'custom' }],
    });
    expect(await getImport(owner.login, both.repo)).toBeUndefined();
    const wrong = await started({ keep_refs_deleted_in_history: 'yes' });
    expect(wrong.response.body.errors).toEqual([
      { resource: 'Import', field: 'keep_refs_deleted_in_history', code: 'invalid' },
    ]);

    // A restarting PATCH takes the new name too.
    const restarted = await api('PATCH', `/repos/${owner.login}/${defaults.repo}/import`, {
      keep_refs_deleted_in_history: false,
    });
    expect(restarted.status, JSON.stringify(restarted.body)).toBe(200);
    expect(await reportChoices(defaults.repo)).toMatchObject({ keep_refs_deleted_in_history: false });
  });

  it('the sync setting is keep_refs_deleted_while_following (default false); keep_deleted_refs is its alias; both differing is 422 with nothing written', async () => {
    const { repo } = await started();
    await complete(repo);
    const url = `/repos/${owner.login}/${repo}/import/sync`;
    const off = await api('GET', url);
    expect(off.body).toMatchObject({ keep_refs_deleted_while_following: false, keep_deleted_refs: false });

    const both = await api('PUT', url, {
      interval_minutes: 60,
      keep_refs_deleted_while_following: true,
      keep_deleted_refs: false,
    });
    expect(both.status).toBe(422);
    expect(both.body.errors).toEqual([
      expect.objectContaining({ resource: 'ImportSync', field: 'keep_deleted_refs', code: 'custom' }),
    ]);
    const record = await getImport(owner.login, repo);
    expect((await getImportSync(owner.login, repo, record?.importId ?? 0))?.state ?? 'off').toBe('off');

    const named = await api('PUT', url, { interval_minutes: 60, keep_refs_deleted_while_following: true });
    expect(named.status, JSON.stringify(named.body)).toBe(200);
    expect(named.body).toMatchObject({ keep_refs_deleted_while_following: true, keep_deleted_refs: true });
    const aliased = await api('PUT', url, { interval_minutes: 60, keep_deleted_refs: false });
    expect(aliased.body).toMatchObject({ keep_refs_deleted_while_following: false });
    // The import's choice is a separate thing: following changed nothing there.
    expect(await reportChoices(repo)).toMatchObject({ keep_refs_deleted_in_history: true });
  });

  it('the progress page shows each under its own name with its default', async () => {
    const { repo } = await started();
    await complete(repo);
    await api('PUT', `/repos/${owner.login}/${repo}/import/sync`, { interval_minutes: 60 });
    const browser = await signedIn(stack.webUrl, owner);
    const page = await browser.get(`/${owner.login}/${repo}/import`);
    expect(page.status).toBe(200);
    const words = browser.lastHtml.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    expect(words).toContain('( keep_refs_deleted_in_history: true )');
    expect(words).toContain('( keep_refs_deleted_while_following: false )');
    expect(words).not.toContain('keep_deleted_refs');
  });
});
