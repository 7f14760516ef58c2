import { base32Decode, timeStep, totpCode } from '#domain/totp';
import { admin } from './admin.ts';
import { basicAuth, json } from './stack.ts';
import { WebClient } from './web-client.ts';

/** A user made with the real admin CLI; `auth` is its Basic header. */
export async function createUser(endpointsFile: string, login: string, password = `${login}-pass-1`) {
  const result = await admin(endpointsFile, 'user', 'create', login, '--password', password);
  if (result.code !== 0) throw new Error(result.stderr);
  return { login, password, auth: basicAuth(login, password) };
}

/** An OAuth application made with the real admin CLI. */
export async function createApp(
  endpointsFile: string,
  owner: string,
  name = 'Test App',
  callbackUrl = 'https://app.example/callback',
) {
  const result = await admin(
    endpointsFile,
    'app',
    'create',
    '--owner',
    owner,
    '--name',
    name,
    '--url',
    'https://app.example',
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

/** Turns on two-factor authentication and returns a code generator for the user's secret. */
export async function enableOtp(endpointsFile: string, login: string) {
  const result = await admin(endpointsFile, 'user', 'otp', 'enable', login);
  const uri = new URL((result.json as { otpauth_uri: string }).otpauth_uri);
  const secret = uri.searchParams.get('secret') ?? '';
  base32Decode(secret); // throws if the CLI printed something else
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
