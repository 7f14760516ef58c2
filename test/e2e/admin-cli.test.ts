import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { basicAuth, startTestStack } from '#test/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('admin CLI', () => {
  it('user create prints the user, and the user can log in', async () => {
    const result = await admin(
      stack.endpointsFile,
      'user',
      'create',
      'mona',
      '--password',
      'mona-pass-123',
      '--site-admin',
      '--name',
      'Mona',
    );
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ login: 'mona', site_admin: true, name: 'Mona' });
    expect(result.stdout).not.toContain('mona-pass-123');
    const me = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: basicAuth('mona', 'mona-pass-123') },
    });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ login: 'mona', site_admin: true });
  });

  it('user create refuses a taken login (any case), a bad login and a weak password', async () => {
    expect(
      (await admin(stack.endpointsFile, 'user', 'create', 'taken', '--password', 'taken-pass-1')).code,
    ).toBe(0);
    const taken = await admin(stack.endpointsFile, 'user', 'create', 'TAKEN', '--password', 'taken-pass-1');
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/already taken/);
    expect(
      (await admin(stack.endpointsFile, 'user', 'create', 'bad_login', '--password', 'taken-pass-1')).stderr,
    ).toMatch(/invalid login/);
    expect((await admin(stack.endpointsFile, 'user', 'create', 'x', '--pasword', 'typo-pass-1')).code).toBe(
      2,
    );
    expect(
      (await admin(stack.endpointsFile, 'user', 'create', 'weak', '--password', 'short')).stderr,
    ).toMatch(/too weak/);
  });

  it('user otp enable prints an otpauth URI', async () => {
    await admin(stack.endpointsFile, 'user', 'create', 'twofa', '--password', 'twofa-pass-1');
    const result = await admin(stack.endpointsFile, 'user', 'otp', 'enable', 'twofa');
    expect(result.code).toBe(0);
    const uri = new URL((result.json as { otpauth_uri: string }).otpauth_uri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.searchParams.get('secret')).toMatch(/^[A-Z2-7]{32}$/);
    expect((await admin(stack.endpointsFile, 'user', 'otp', 'enable', 'ghost-user')).code).toBe(1);
  });

  it('app create prints a 20-character client_id and a 40-character secret shown once', async () => {
    await admin(stack.endpointsFile, 'user', 'create', 'appowner', '--password', 'appowner-pass-1');
    const result = await admin(
      stack.endpointsFile,
      'app',
      'create',
      '--owner',
      'appowner',
      '--name',
      'My App',
      '--url',
      'https://example.com',
      '--callback-url',
      'https://example.com/callback',
    );
    expect(result.code).toBe(0);
    const app = result.json as Record<string, unknown>;
    expect(app.client_id).toMatch(/^[0-9a-f]{20}$/);
    expect(app.client_secret).toMatch(/^[0-9a-f]{40}$/);
    expect(app).toMatchObject({
      name: 'My App',
      callback_url: 'https://example.com/callback',
      suspended: false,
      owner_login: 'appowner',
    });
    expect(JSON.stringify(app)).not.toContain('secret_hash');

    const suspended = await admin(stack.endpointsFile, 'app', 'suspend', String(app.client_id));
    expect(suspended.json).toMatchObject({ client_id: app.client_id, suspended: true });
    const unsuspended = await admin(stack.endpointsFile, 'app', 'unsuspend', String(app.client_id));
    expect(unsuspended.json).toMatchObject({ suspended: false });
    expect((await admin(stack.endpointsFile, 'app', 'suspend', '00000000000000000000')).code).toBe(1);
  });

  it('app create checks its owner and URLs', async () => {
    const noOwner = await admin(
      stack.endpointsFile,
      'app',
      'create',
      '--owner',
      'ghost-user',
      '--name',
      'x',
      '--url',
      'https://e.com',
      '--callback-url',
      'https://e.com/cb',
    );
    expect(noOwner.stderr).toMatch(/no user/);
    const badUrl = await admin(
      stack.endpointsFile,
      'app',
      'create',
      '--owner',
      'appowner',
      '--name',
      'x',
      '--url',
      'javascript:alert(1)',
      '--callback-url',
      'https://e.com/cb',
    );
    expect(badUrl.stderr).toMatch(/--url must be/);
  });

  it('app create --client-id hosts a well-known client under its own credentials, once', async () => {
    await admin(stack.endpointsFile, 'user', 'create', 'cli-host', '--password', 'cli-host-pass-1');
    const create = (...credentials: string[]) =>
      admin(
        stack.endpointsFile,
        'app',
        'create',
        '--owner',
        'cli-host',
        '--name',
        'GitHub CLI',
        '--url',
        'https://github.com/cli/cli',
        '--callback-url',
        'http://localhost/',
        ...credentials,
      );
    const secret = '34ddeff2b558a23d38fba8a6de74f086ede1cc0b';
    const made = await create('--client-id', '178c6fc778ccc68e1d6a', '--client-secret', secret);
    expect(made.code, made.stderr).toBe(0);
    expect(made.json).toMatchObject({ client_id: '178c6fc778ccc68e1d6a', client_secret: secret });
    const enabled = await admin(stack.endpointsFile, 'app', 'device-flow', 'enable', '178c6fc778ccc68e1d6a');
    expect(enabled.json).toMatchObject({ device_flow_enabled: true });
    // The given secret is the client's: the application endpoints accept it.
    const check = await fetch(
      `${stack.baseUrl}/applications/178c6fc778ccc68e1d6a/tokens/gho_${'x'.repeat(36)}`,
      {
        headers: { Authorization: basicAuth('178c6fc778ccc68e1d6a', secret) },
      },
    );
    expect(check.status).toBe(404);

    const again = await create('--client-id', '178c6fc778ccc68e1d6a');
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toEqual({
      error: 'client id "178c6fc778ccc68e1d6a" is already registered',
    });
    for (const bad of ['178c6fc778ccc68e1d6', 'Iv1.0123456789abcdef', '178c6fc778ccc68e1d6a0']) {
      const refused = await create('--client-id', bad);
      expect(refused.code, bad).toBe(1);
      expect(refused.stderr, bad).toContain('invalid client id');
    }
    const weak = await create('--client-id', '0123456789abcdefABCD', '--client-secret', 'short');
    expect(weak.stderr).toContain('invalid client secret');
    const secretOnly = await create('--client-secret', secret);
    expect(secretOnly.code).toBe(2);
    expect(secretOnly.stderr).toContain('--client-secret needs --client-id');
  });

  it('repo create makes a repository the API serves, private ones only to the owner', async () => {
    await admin(stack.endpointsFile, 'user', 'create', 'repoowner', '--password', 'repoowner-pass-1');
    const result = await admin(stack.endpointsFile, 'repo', 'create', 'repoowner/tools', '--private');
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ name: 'tools', owner_login: 'repoowner', private: true });
    expect((await fetch(`${stack.baseUrl}/repos/repoowner/tools`)).status).toBe(404);
    const own = await fetch(`${stack.baseUrl}/repos/repoowner/tools`, {
      headers: { Authorization: basicAuth('repoowner', 'repoowner-pass-1') },
    });
    expect(own.status).toBe(200);
    expect((await admin(stack.endpointsFile, 'repo', 'create', 'repoowner/tools')).stderr).toMatch(
      /already exists/,
    );
    expect((await admin(stack.endpointsFile, 'repo', 'create', 'no-slash')).code).toBe(2);
  });

  it('oauth registration enable|disable switches dynamic client registration for the whole service', async () => {
    const register = () =>
      fetch(`${stack.webUrl}/login/oauth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1/callback'] }),
      });
    expect((await register()).status).toBe(404);
    const on = await admin(stack.endpointsFile, 'oauth', 'registration', 'enable');
    expect(on.json).toEqual({ dynamic_client_registration: true });
    expect((await register()).status).toBe(201);
    await admin(stack.endpointsFile, 'oauth', 'registration', 'disable');
    expect((await register()).status).toBe(404);
    expect((await admin(stack.endpointsFile, 'oauth', 'registration', 'maybe')).code).toBe(2);
  });

  it('unknown commands print usage and exit 2', async () => {
    const result = await admin(stack.endpointsFile, 'frobnicate');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Usage: npm run admin/);
  });

  it('--table uses the named table with the standard AWS configuration (here pointed at DynamoDB Local)', async () => {
    const env = {
      DYNAMODB_ENDPOINT: '', // not the local override: the SDK's own configuration must find the endpoint
      AWS_ENDPOINT_URL_DYNAMODB: stack.dynamodbEndpoint,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    };
    const result = await admin(
      '/nonexistent/local.json',
      { env },
      'user',
      'create',
      'deployed',
      '--password',
      'deployed-pass-1',
      '--table',
      stack.tableName,
      '--region',
      'us-east-1',
    );
    expect(result.code, result.stderr).toBe(0);
    const me = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: basicAuth('deployed', 'deployed-pass-1') },
    });
    expect(me.status).toBe(200);
  });

  it('says how to start the stack when it is not running', async () => {
    const result = await admin('/nonexistent/local.json', 'user', 'create', 'x', '--password', 'abcdefg1');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/npm start/);
  });
});
