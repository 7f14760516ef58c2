import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { createApp, createUser, personalToken } from '#test/fixtures';
import { generateSshKey, sshLine, sshMpint, sshString } from '#test/ssh-keys';
import { json, startTestStack } from '#test/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let octocat: Awaited<ReturnType<typeof createUser>>;
let hubot: Awaited<ReturnType<typeof createUser>>;

const api = (path: string, init: RequestInit = {}) => fetch(`${stack.baseUrl}${path}`, init);
const post = (path: string, authorization: string, body: unknown) =>
  api(path, { method: 'POST', headers: { Authorization: authorization }, body: JSON.stringify(body) });
const get = (path: string, authorization: string) => api(path, { headers: { Authorization: authorization } });
const del = (path: string, authorization: string) =>
  api(path, { method: 'DELETE', headers: { Authorization: authorization } });
const bearer = (token: string) => `token ${token}`;

const INVALID = {
  resource: 'PublicKey',
  field: 'key',
  code: 'custom',
  message: 'key is invalid. You must supply a key in OpenSSH public key format',
};
const IN_USE = { resource: 'PublicKey', field: 'key', code: 'custom', message: 'key is already in use' };

beforeAll(async () => {
  stack = await startTestStack();
  [octocat, hubot] = await Promise.all([
    createUser(stack.endpointsFile, 'octocat'),
    createUser(stack.endpointsFile, 'hubot'),
  ]);
  for (const repo of ['octocat/Deploy-Target', 'hubot/other'])
    expect((await admin(stack.endpointsFile, 'repo', 'create', repo)).code).toBe(0);
});

afterAll(async () => {
  await stack?.stop();
});

describe('SSH keys of the authenticated user (/user/keys)', () => {
  it('POST creates a key (201, Location), stored without its comment, in GitHub shape', async () => {
    const { line } = generateSshKey('ed25519');
    const response = await post('/user/keys', octocat.auth, {
      key: `${line} octocat@laptop`,
      title: 'Laptop',
    });
    expect(response.status).toBe(201);
    const key = await json(response);
    expect(key).toEqual({
      id: expect.any(Number),
      key: line,
      url: `${stack.baseUrl}/user/keys/${key.id}`,
      title: 'Laptop',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      verified: true,
      read_only: false,
    });
    expect(response.headers.get('location')).toBe(key.url);

    const fetched = await get(`/user/keys/${key.id}`, octocat.auth);
    expect(fetched.status).toBe(200);
    expect(await json(fetched)).toEqual(key);
  });

  it('takes the title from the key comment when none is given', async () => {
    const { line } = generateSshKey('ecdsa-p256');
    const response = await post('/user/keys', octocat.auth, { key: `${line} work desktop` });
    expect(response.status).toBe(201);
    expect((await json(response)).title).toBe('work desktop');
  });

  it('lists keys in id order, paged with a Link header', async () => {
    const created: number[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await post('/user/keys', hubot.auth, {
        key: generateSshKey('rsa').line,
        title: `k${i}`,
      });
      expect(response.status).toBe(201);
      created.push((await json(response)).id);
    }
    const all = await get('/user/keys', hubot.auth);
    expect(all.status).toBe(200);
    expect(all.headers.get('link')).toBeNull();
    expect((await json(all)).map((k: { id: number }) => k.id)).toEqual(created);

    const first = await get('/user/keys?per_page=2', hubot.auth);
    expect((await json(first)).map((k: { id: number }) => k.id)).toEqual(created.slice(0, 2));
    expect(first.headers.get('link')).toBe(
      `<${stack.baseUrl}/user/keys?per_page=2&page=2>; rel="next", <${stack.baseUrl}/user/keys?per_page=2&page=2>; rel="last"`,
    );
    const second = await get('/user/keys?per_page=2&page=2', hubot.auth);
    expect((await json(second)).map((k: { id: number }) => k.id)).toEqual(created.slice(2));
    expect(second.headers.get('link')).toContain('rel="prev"');
  });

  it("DELETE removes a key (204) and frees it; someone else's or an unknown key is 404", async () => {
    const { line } = generateSshKey('ed25519');
    const key = await json(await post('/user/keys', octocat.auth, { key: line }));
    expect((await get(`/user/keys/${key.id}`, hubot.auth)).status).toBe(404);
    expect((await del(`/user/keys/${key.id}`, hubot.auth)).status).toBe(404);

    const deleted = await del(`/user/keys/${key.id}`, octocat.auth);
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect((await get(`/user/keys/${key.id}`, octocat.auth)).status).toBe(404);
    expect((await del(`/user/keys/${key.id}`, octocat.auth)).status).toBe(404);
    for (const id of ['999999', 'abc', '0'])
      expect((await get(`/user/keys/${id}`, octocat.auth)).status).toBe(404);
    // Freed: the same public key can be registered again, here by another user.
    expect((await post('/user/keys', hubot.auth, { key: line })).status).toBe(201);
  });

  it('refuses keys that are not OpenSSH public keys with 422', async () => {
    for (const key of [
      'not a key',
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==',
      `ssh-rsa ${generateSshKey('ed25519').line.split(' ')[1]}`,
      '-----BEGIN PUBLIC KEY-----',
    ]) {
      const response = await post('/user/keys', octocat.auth, { key });
      expect(response.status, key).toBe(422);
      expect(await json(response)).toEqual({
        message: 'Validation Failed',
        errors: [INVALID],
        documentation_url: expect.any(String),
      });
    }
  });

  it('refuses RSA keys that are not usable (oversized or even exponent, even modulus) with 422 and stores nothing', async () => {
    const { blob } = generateSshKey('rsa', 1024);
    // The wire blob: type string, exponent mpint, modulus mpint.
    const typeEnd = 4 + blob.readUInt32BE(0);
    const exponentEnd = typeEnd + 4 + blob.readUInt32BE(typeEnd);
    const modulus = blob.subarray(exponentEnd + 4 + 1); // without the mpint's leading zero byte
    const rsa = (exponent: Buffer, n: Buffer = modulus) =>
      sshLine(Buffer.concat([sshString('ssh-rsa'), sshMpint(exponent), sshMpint(n)]));
    const evenModulus = Buffer.from(modulus);
    evenModulus[evenModulus.length - 1] = (evenModulus.at(-1) ?? 0) & 0xfe;
    for (const [what, key] of [
      // A 300 KB exponent used to be stored, a 600 KB one answered 500.
      ['300 KB exponent', rsa(Buffer.concat([Buffer.of(0x7f), Buffer.alloc(300 * 1024, 0xff)]))],
      ['600 KB exponent', rsa(Buffer.concat([Buffer.of(0x7f), Buffer.alloc(600 * 1024, 0xff)]))],
      ['exponent above the modulus', rsa(Buffer.concat([Buffer.of(0x7f), Buffer.alloc(200, 0xff)]))],
      ['even exponent', rsa(Buffer.of(0x01, 0x00, 0x00))],
      ['exponent 1', rsa(Buffer.of(0x01))],
      ['even modulus', rsa(Buffer.of(0x01, 0x00, 0x01), evenModulus)],
    ] as const) {
      const response = await post('/user/keys', octocat.auth, { key, title: what });
      expect(response.status, what).toBe(422);
      expect(await json(response), what).toEqual({
        message: 'Validation Failed',
        errors: [INVALID],
        documentation_url: expect.any(String),
      });
    }
    const listed = await json(await get('/user/keys', octocat.auth));
    expect(listed.map((key: { title: string }) => key.title)).not.toContain('300 KB exponent');
    // The same modulus with exponent 65537 is a usable key.
    expect((await post('/user/keys', octocat.auth, { key: rsa(Buffer.of(0x01, 0x00, 0x01)) })).status).toBe(
      201,
    );
  });

  it('refuses a key registered anywhere already (as a user key or a deploy key) with 422', async () => {
    const { line } = generateSshKey('ed25519');
    expect((await post('/user/keys', octocat.auth, { key: `${line} first` })).status).toBe(201);
    for (const [path, auth] of [
      ['/user/keys', octocat.auth],
      ['/user/keys', hubot.auth],
      ['/repos/octocat/deploy-target/keys', octocat.auth],
    ] as const) {
      const response = await post(path, auth, { key: `${line} another comment` });
      expect(response.status, path).toBe(422);
      expect((await json(response)).errors).toEqual([IN_USE]);
    }
  });

  it('validates the body: key is required, title is a string of at most 255', async () => {
    const missing = await post('/user/keys', octocat.auth, { title: 'no key' });
    expect(missing.status).toBe(422);
    expect((await json(missing)).errors).toEqual([
      { resource: 'PublicKey', field: 'key', code: 'missing_field' },
    ]);
    const long = await post('/user/keys', octocat.auth, {
      key: generateSshKey().line,
      title: 'x'.repeat(256),
    });
    expect(long.status).toBe(422);
    expect((await json(long)).errors).toEqual([{ resource: 'PublicKey', field: 'title', code: 'invalid' }]);
  });

  it('needs authentication', async () => {
    expect((await api('/user/keys')).status).toBe(401);
    expect((await api('/user/keys', { method: 'POST', body: JSON.stringify({ key: 'x' }) })).status).toBe(
      401,
    );
  });
});

describe('deploy keys (/repos/:owner/:repo/keys)', () => {
  const keysOf = '/repos/octocat/deploy-target/keys';

  it('the owner creates, lists, gets and deletes deploy keys', async () => {
    const { line } = generateSshKey('ecdsa-p384');
    const response = await post(keysOf, octocat.auth, { key: `${line} ci`, title: 'CI', read_only: true });
    expect(response.status).toBe(201);
    const key = await json(response);
    expect(key).toEqual({
      id: expect.any(Number),
      key: line,
      url: `${stack.baseUrl}/repos/octocat/Deploy-Target/keys/${key.id}`,
      title: 'CI',
      verified: true,
      created_at: expect.any(String),
      read_only: true,
    });
    expect(response.headers.get('location')).toBe(key.url);

    const writable = await json(
      await post(keysOf, octocat.auth, { key: generateSshKey().line, title: 'deployer' }),
    );
    expect(writable.read_only).toBe(false);

    const list = await get(keysOf, octocat.auth);
    expect(list.status).toBe(200);
    expect(await json(list)).toEqual([key, writable]);
    const paged = await get(`${keysOf}?per_page=1`, octocat.auth);
    expect(await json(paged)).toEqual([key]);
    expect(paged.headers.get('link')).toContain(
      `<${stack.baseUrl}/repos/octocat/Deploy-Target/keys?per_page=1&page=2>; rel="next"`,
    );

    expect(await json(await get(`${keysOf}/${key.id}`, octocat.auth))).toEqual(key);
    // A user key id is not a deploy key of the repository.
    const userKey = await json(await post('/user/keys', octocat.auth, { key: generateSshKey().line }));
    expect((await get(`${keysOf}/${userKey.id}`, octocat.auth)).status).toBe(404);

    expect((await del(`${keysOf}/${key.id}`, octocat.auth)).status).toBe(204);
    expect((await get(`${keysOf}/${key.id}`, octocat.auth)).status).toBe(404);
    expect((await del(`${keysOf}/${key.id}`, octocat.auth)).status).toBe(404);
    expect(await json(await get(keysOf, octocat.auth))).toEqual([writable]);
  });

  it("another user's repository and an unknown repository are 404", async () => {
    const mine = await json(await post(keysOf, octocat.auth, { key: generateSshKey().line }));
    expect(mine.id).toEqual(expect.any(Number));
    expect((await get(keysOf, hubot.auth)).status).toBe(404);
    expect((await post(keysOf, hubot.auth, { key: generateSshKey().line })).status).toBe(404);
    expect((await get(`${keysOf}/${mine.id}`, hubot.auth)).status).toBe(404);
    expect((await del(`${keysOf}/${mine.id}`, hubot.auth)).status).toBe(404);
    expect((await get('/repos/hubot/other/keys', octocat.auth)).status).toBe(404);
    expect((await get('/repos/octocat/no-such-repo/keys', octocat.auth)).status).toBe(404);
    expect(
      (await post('/repos/nobody/nothing/keys', octocat.auth, { key: generateSshKey().line })).status,
    ).toBe(404);
  });

  it('refuses an invalid key with 422, and needs authentication', async () => {
    const response = await post(keysOf, octocat.auth, { key: 'ssh-ed25519 bm90IGEga2V5' });
    expect(response.status).toBe(422);
    expect((await json(response)).errors).toEqual([INVALID]);
    expect((await api(keysOf)).status).toBe(401);
  });
});

describe('OAuth scopes on key routes', () => {
  it('read:public_key may list and get keys but not create them (404)', async () => {
    const { token } = await personalToken(stack.baseUrl, octocat.auth, ['read:public_key']);
    const list = await get('/user/keys', bearer(token));
    expect(list.status).toBe(200);
    expect(list.headers.get('x-oauth-scopes')).toBe('read:public_key');
    expect(list.headers.get('x-accepted-oauth-scopes')).toBe(
      'read:public_key, write:public_key, admin:public_key',
    );
    const created = await post('/user/keys', bearer(token), { key: generateSshKey().line });
    expect(created.status).toBe(404);
    // And a token without `repo` does not see deploy keys.
    expect((await get('/repos/octocat/deploy-target/keys', bearer(token))).status).toBe(404);
  });

  it('write:public_key may create keys but only admin:public_key may delete them', async () => {
    const { token: writer } = await personalToken(stack.baseUrl, octocat.auth, ['write:public_key']);
    const created = await post('/user/keys', bearer(writer), { key: generateSshKey().line });
    expect(created.status).toBe(201);
    const key = await json(created);
    expect((await get(`/user/keys/${key.id}`, bearer(writer))).status).toBe(200);
    expect((await del(`/user/keys/${key.id}`, bearer(writer))).status).toBe(404);
    const { token: adminToken } = await personalToken(stack.baseUrl, octocat.auth, ['admin:public_key']);
    expect((await del(`/user/keys/${key.id}`, bearer(adminToken))).status).toBe(204);
  });

  it('repo may manage deploy keys', async () => {
    const { token } = await personalToken(stack.baseUrl, octocat.auth, ['repo']);
    const created = await post('/repos/octocat/deploy-target/keys', bearer(token), {
      key: generateSshKey().line,
    });
    expect(created.status).toBe(201);
    expect((await get('/user/keys', bearer(token))).status).toBe(404);
  });
});

describe("revoking an application's grant", () => {
  it('deletes the SSH keys and deploy keys its tokens created for the user, and only those', async () => {
    const app = await createApp(stack.endpointsFile, 'hubot', 'Key Maker');
    const authorization = await post('/authorizations', octocat.auth, {
      scopes: ['admin:public_key', 'repo'],
      note: 'key maker',
      client_id: app.clientId,
      client_secret: app.clientSecret,
    });
    expect(authorization.status).toBe(201);
    const appToken = bearer((await json(authorization)).token);
    const appUserKey = generateSshKey().line;
    const appDeployKey = generateSshKey().line;
    const ownUserKey = generateSshKey().line;
    expect((await post('/user/keys', appToken, { key: appUserKey })).status).toBe(201);
    expect((await post('/repos/octocat/deploy-target/keys', appToken, { key: appDeployKey })).status).toBe(
      201,
    );
    expect((await post('/user/keys', octocat.auth, { key: ownUserKey })).status).toBe(201);

    const grants = await json(await get('/applications/grants', octocat.auth));
    const grant = grants.find((g: { app: { client_id: string } }) => g.app.client_id === app.clientId);
    expect((await del(`/applications/grants/${grant.id}`, octocat.auth)).status).toBe(204);

    const userKeys = (await json(await get('/user/keys?per_page=100', octocat.auth))).map(
      (k: { key: string }) => k.key,
    );
    expect(userKeys).toContain(ownUserKey);
    expect(userKeys).not.toContain(appUserKey);
    const deployKeys = (
      await json(await get('/repos/octocat/deploy-target/keys?per_page=100', octocat.auth))
    ).map((k: { key: string }) => k.key);
    expect(deployKeys).not.toContain(appDeployKey);
    // Their public keys are free again.
    expect((await post('/user/keys', hubot.auth, { key: appUserKey })).status).toBe(201);
    expect((await post('/user/keys', hubot.auth, { key: appDeployKey })).status).toBe(201);
  });
});
