import { readFile } from 'node:fs/promises';
import { base32Decode, timeStep, totpCode } from '#domain/totp';
import type { LocalEndpoints } from '#local/stack';
import { config, ENV } from '#shared/config';
import { admin } from './admin.ts';
import { basicAuth, json } from './stack.ts';
import { WebClient } from './web-client.ts';

/**
 * Whether the stack behind `endpointsFile` is the one this process's handlers serve (the test
 * stack of this file): then users and applications are made here, by the services the admin CLI
 * calls, instead of by a CLI process each. A process costs about two seconds under the suite's
 * load, and the suite made a few hundred; the CLI itself is tested in admin-cli.test.ts.
 */
async function servedHere(endpointsFile: string): Promise<boolean> {
  if (!process.env[ENV.tableName]) return false;
  const endpoints = JSON.parse(await readFile(endpointsFile, 'utf8')) as Partial<LocalEndpoints>;
  // The configuration the services read (once a process), not the environment: a file that starts
  // a second stack sets the environment anew while the services keep the first stack's table.
  const served = config();
  return endpoints.tableName === served.tableName && endpoints.dynamodbEndpoint === served.dynamodbEndpoint;
}

/** A user made as the admin CLI makes one (`user create`); `auth` is its Basic header. */
export async function createUser(endpointsFile: string, login: string, password = `${login}-pass-1`) {
  if (await servedHere(endpointsFile)) {
    // Loaded on first use, as the CLI loads them, once the stack's environment is set.
    const [{ isValidLogin }, { isAcceptablePassword }, { createAccount }] = await Promise.all([
      import('#domain/users'),
      import('#domain/passwords'),
      import('#services/accounts'),
    ]);
    if (!isValidLogin(login) || !isAcceptablePassword(password))
      throw new Error(`invalid fixture user ${login}`);
    if (!(await createAccount({ login, password }))) throw new Error(`login "${login}" is already taken`);
  } else {
    const result = await admin(endpointsFile, 'user', 'create', login, '--password', password);
    if (result.code !== 0) throw new Error(result.stderr);
  }
  return { login, password, auth: basicAuth(login, password) };
}

/** An OAuth application made as the admin CLI makes one (`app create`). */
export async function createApp(
  endpointsFile: string,
  owner: string,
  name = 'Test App',
  callbackUrl = 'https://app.example/callback',
) {
  const url = 'https://app.example';
  if (await servedHere(endpointsFile)) {
    const [{ isAcceptableAppUrl }, { registerApp }, { userNamed }] = await Promise.all([
      import('#domain/apps'),
      import('#services/apps'),
      import('#services/accounts'),
    ]);
    if (!isAcceptableAppUrl(callbackUrl)) throw new Error(`invalid fixture callback URL ${callbackUrl}`);
    const user = await userNamed(owner);
    if (!user) throw new Error(`no user "${owner}"`);
    const { app, clientSecret } = await registerApp({ ownerLogin: user.login, name, url, callbackUrl });
    return {
      clientId: app.clientId,
      clientSecret,
      name: app.name,
      basic: basicAuth(app.clientId, clientSecret),
    };
  }
  const result = await admin(
    endpointsFile,
    'app',
    'create',
    '--owner',
    owner,
    '--name',
    name,
    '--url',
    url,
    '--callback-url',
    callbackUrl,
  );
  if (result.code !== 0) throw new Error(result.stderr);
  const app = result.json as { client_id: string; client_secret: string; name: string };
  return {
    clientId: app.client_id,
    clientSecret: app.client_secret,
    name: app.name,
    basic: basicAuth(app.client_id, app.client_secret),
  };
}

/** Turns on two-factor authentication as the admin CLI does and returns a code generator for the user's secret. */
export async function enableOtp(endpointsFile: string, login: string) {
  let secret: string;
  if (await servedHere(endpointsFile)) {
    const [{ newTotpSecret }, { enableOtp: enable }] = await Promise.all([
      import('#domain/totp'),
      import('#services/sign-in'),
    ]);
    secret = newTotpSecret();
    if (!(await enable(login, secret))) throw new Error(`no user "${login}"`);
  } else {
    const result = await admin(endpointsFile, 'user', 'otp', 'enable', login);
    const uri = new URL((result.json as { otpauth_uri: string }).otpauth_uri);
    secret = uri.searchParams.get('secret') ?? '';
    base32Decode(secret); // throws if the CLI printed something else
  }
  return { secret, code: (offsetSteps = 0) => totpCode(secret, timeStep(Date.now()) + offsetSteps) };
}

/** Creates a personal access token over HTTP (POST /authorizations with Basic). */
export async function personalToken(
  baseUrl: string,
  auth: string,
  scopes: string[],
  note = `note-${Math.random()}`,
) {
  const response = await fetch(`${baseUrl}/authorizations`, {
    method: 'POST',
    headers: { Authorization: auth },
    body: JSON.stringify({ scopes, note }),
  });
  if (response.status !== 201)
    throw new Error(`token not created: ${response.status} ${await response.text()}`);
  return (await json(response)) as { id: number; token: string; scopes: string[] };
}

/** A new user, signed up (and so signed in) through the sign-up page of the site at `webUrl`. */
export async function signedUpUser(webUrl: string, login: string, password = 'long-enough-pass-1') {
  const browser = new WebClient(webUrl);
  await browser.get('/signup');
  const response = await browser.post('/signup', { login, email: `${login}@example.com`, password });
  if (response.status !== 303) throw new Error(`sign-up of ${login} answered ${response.status}`);
  return { browser, login, auth: basicAuth(login, password) };
}

/**
 * A token granted for the MCP endpoint (RFC 8707), as an MCP client gets one: `user` signs in,
 * approves an application of its own asking for `scopes` and `resource={web}/mcp`, and the
 * application exchanges the code. A personal token is a REST API token and does not open `/mcp`.
 */
export async function mcpToken(
  stack: { readonly endpointsFile: string; readonly webUrl: string },
  user: { readonly login: string; readonly password: string },
  scopes: string[],
): Promise<string> {
  const { signedIn, authorizedCode } = await import('./web-client.ts');
  const web = stack.webUrl.replace(/\/$/, '');
  const resource = `${web}/mcp`;
  const app = await createApp(stack.endpointsFile, user.login, `MCP agent ${Math.random()}`);
  const browser = await signedIn(web, user);
  const code = await authorizedCode(browser, app.clientId, scopes.join(' '), { resource });
  const response = await fetch(`${web}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, code, resource }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no MCP token: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}
