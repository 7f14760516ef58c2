import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { basicAuth, json, startTestStack } from '#test/stack';

/**
 * The Git LFS batch API hands out its own short-lived credential for each action (GitHub's
 * `RemoteAuth` header), never the caller's: a token that works only for its repository, its
 * operation and its object, until it expires. The lifetime is shortened so that expiry is seen.
 */
const LIFETIME_SECONDS = 4;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let owner: { login: string; password: string; auth: string };
let ownerToken: string;

const content = randomBytes(4096);
const oid = createHash('sha256').update(content).digest('hex');
const lfsUrl = (repo: string) => `${stack.webUrl}/${owner.login}/${repo}.git/info/lfs/objects`;

interface Action {
  href: string;
  header?: Record<string, string>;
  expires_in?: number;
  expires_at?: string;
}

async function batch(
  repo: string,
  operation: 'download' | 'upload',
  authorization: string,
  objects = [{ oid, size: content.length }],
) {
  const response = await fetch(`${lfsUrl(repo)}/batch`, {
    method: 'POST',
    headers: {
      Authorization: authorization,
      Accept: 'application/vnd.git-lfs+json',
      'Content-Type': 'application/vnd.git-lfs+json',
    },
    body: JSON.stringify({ operation, objects }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { text, body: JSON.parse(text) };
}

/** The one action of a batch for `content` (an upload needs an object the repository lacks). */
async function actionFor(
  repo: string,
  operation: 'download' | 'upload',
  object = { oid, size: content.length },
) {
  const { body } = await batch(repo, operation, `token ${ownerToken}`, [object]);
  const action = body.objects[0].actions?.[operation] as Action | undefined;
  expect(action, JSON.stringify(body)).toBeDefined();
  return action as Action;
}

/** Uses an action's header (and nothing else) against `href`, as git-lfs does. */
const download = (href: string, header: Record<string, string> = {}) => fetch(href, { headers: header });
const upload = (href: string, header: Record<string, string> = {}, body: Buffer = content) =>
  fetch(href, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/octet-stream', ...header },
    body,
  });

/** The same header with its Authorization replaced. */
const withAuthorization = (header: Record<string, string> | undefined, authorization: string) => ({
  ...header,
  Authorization: authorization,
});

beforeAll(async () => {
  process.env[ENV.lfsActionSeconds] = String(LIFETIME_SECONDS);
  stack = await startTestStack();
  owner = await createUser(stack.endpointsFile, 'lfsowner');
  ownerToken = (await personalToken(stack.baseUrl, owner.auth, ['repo'])).token;
  for (const name of ['alpha', 'beta']) {
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name, private: true }),
    });
    expect(created.status).toBe(201);
    // The object is in both repositories, put there with the owner's own credentials.
    const put = await upload(`${lfsUrl(name)}/${oid}?size=${content.length}`, {
      Authorization: `token ${ownerToken}`,
    });
    expect(put.status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('LFS batch actions', () => {
  it("carry none of the caller's password or token, for a password, a token in Basic and a token header", async () => {
    const tokenBasic = basicAuth(owner.login, ownerToken);
    const callers = [owner.auth, tokenBasic, `token ${ownerToken}`, `Bearer ${ownerToken}`];
    const fresh = { oid: createHash('sha256').update('not yet uploaded').digest('hex'), size: 16 };
    for (const authorization of callers)
      for (const [operation, objects] of [
        ['download', [{ oid, size: content.length }]],
        ['upload', [fresh]],
      ] as const) {
        const { text, body } = await batch('alpha', operation, authorization, [...objects]);
        for (const secret of [
          owner.password,
          ownerToken,
          ownerToken.slice(4, 20),
          authorization,
          authorization.split(' ')[1] ?? '',
          Buffer.from(owner.password).toString('base64'),
        ])
          expect(text).not.toContain(secret);
        const action = body.objects[0].actions[operation] as Action;
        expect(action.header?.Authorization).toMatch(/^RemoteAuth \S+$/);
        expect(action.expires_in).toBe(LIFETIME_SECONDS);
        const expiresAt = Date.parse(action.expires_at ?? '');
        expect(expiresAt - Date.now()).toBeGreaterThan(0);
        expect(expiresAt - Date.now()).toBeLessThanOrEqual(LIFETIME_SECONDS * 1000);
        expect(body.objects[0].authenticated).toBe(true);
      }
  });

  it('carry a token that downloads the object, with no other credentials, from a private repository', async () => {
    const anonymous = await download(`${lfsUrl('alpha')}/${oid}`);
    expect(anonymous.status).toBe(401);
    const action = await actionFor('alpha', 'download');

    const response = await download(action.href, action.header);

    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(content)).toBe(true);
  });

  it('carry a token that uploads the object it names, with no other credentials', async () => {
    const object = randomBytes(1000);
    const named = { oid: createHash('sha256').update(object).digest('hex'), size: object.length };
    const action = await actionFor('alpha', 'upload', named);

    expect((await upload(action.href, action.header, object)).status).toBe(200);

    const back = await download(`${lfsUrl('alpha')}/${named.oid}`, { Authorization: `token ${ownerToken}` });
    expect(Buffer.from(await back.arrayBuffer()).equals(object)).toBe(true);
  });

  it('refuse a download token for another repository, another object or an upload', async () => {
    const action = await actionFor('alpha', 'download');
    const header = action.header ?? {};

    expect((await download(`${lfsUrl('beta')}/${oid}`, header)).status).toBe(401);
    expect((await download(`${lfsUrl('alpha')}/${'e'.repeat(64)}`, header)).status).toBe(401);
    expect((await upload(`${lfsUrl('alpha')}/${oid}?size=${content.length}`, header)).status).toBe(401);
    // The token itself still works where it was meant to.
    expect((await download(action.href, header)).status).toBe(200);
  });

  it('refuse an upload token for another repository, another object or a download', async () => {
    const object = randomBytes(500);
    const named = { oid: createHash('sha256').update(object).digest('hex'), size: object.length };
    const action = await actionFor('alpha', 'upload', named);
    const header = action.header ?? {};

    expect(
      (await upload(`${lfsUrl('beta')}/${named.oid}?size=${object.length}`, header, object)).status,
    ).toBe(401);
    const other = randomBytes(500);
    const otherOid = createHash('sha256').update(other).digest('hex');
    expect((await upload(`${lfsUrl('alpha')}/${otherOid}?size=${other.length}`, header, other)).status).toBe(
      401,
    );
    expect((await download(`${lfsUrl('alpha')}/${oid}`, header)).status).toBe(401);
  });

  it('refuse a tampered token, and a token on the routes that are not its object route', async () => {
    const action = await actionFor('alpha', 'download');
    const token = (action.header?.Authorization ?? '').replace(/^RemoteAuth /, '');
    const flip = (text: string, at: number) =>
      `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
    const tampered = [
      flip(token, token.length - 1),
      flip(token, 0),
      token.slice(0, -1),
      `${token}A`,
      token.replace(/\d+/, (expiry) => String(Number(expiry) + 3_600_000)),
      '',
      'x',
    ];
    for (const bad of tampered) {
      const response = await download(action.href, withAuthorization(action.header, `RemoteAuth ${bad}`));
      expect(response.status, bad).toBe(401);
      expect((await json(response)).message).not.toContain(bad || '\0');
    }
    const remote = { Authorization: `RemoteAuth ${token}` };
    const refs = await fetch(`${stack.webUrl}/${owner.login}/alpha.git/info/refs?service=git-upload-pack`, {
      headers: remote,
    });
    expect(refs.status).toBe(401);
    const api = await fetch(`${stack.baseUrl}/user`, { headers: remote });
    expect(api.status).toBe(401);
    expect((await download(action.href, action.header)).status).toBe(200);
  });

  it("still take the owner's own credentials on the object route", async () => {
    for (const authorization of [owner.auth, `token ${ownerToken}`]) {
      const response = await download(`${lfsUrl('alpha')}/${oid}`, { Authorization: authorization });
      expect(response.status).toBe(200);
    }
  });

  it('refuse a token once it has expired', async () => {
    const downloadAction = await actionFor('alpha', 'download');
    const object = randomBytes(300);
    const named = { oid: createHash('sha256').update(object).digest('hex'), size: object.length };
    const uploadAction = await actionFor('alpha', 'upload', named);
    const expiresAt = Date.parse(uploadAction.expires_at ?? '');

    await delay(Math.max(0, expiresAt - Date.now()) + 250);

    expect((await download(downloadAction.href, downloadAction.header)).status).toBe(401);
    expect((await upload(uploadAction.href, uploadAction.header, object)).status).toBe(401);
  }, 30_000);
});
