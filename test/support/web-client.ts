// The client lives in lib/ so that the benchmark can use it without importing test code.
import { WebClient as WebClientClass } from '#local/web-client';

export { WebClient } from '#local/web-client';

type WebClient = WebClientClass;

/**
 * A code for `clientId` and `scope` through the signed-in browser's authorize page: redirected at
 * once when the grant covers the scope, else through the consent form, as a user approves it.
 */
export async function authorizedCode(
  browser: WebClient,
  clientId: string,
  scope: string,
  extra: Record<string, string> = {},
): Promise<string> {
  const path = `/login/oauth/authorize?${new URLSearchParams({ client_id: clientId, scope, state: 's', ...extra })}`;
  let response = await browser.get(path);
  if (response.status === 200) {
    const fields: Record<string, string> = { decision: 'authorize', granted_scope: scope };
    for (const match of browser.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      if (match[1] !== '_csrf') fields[match[1] ?? ''] = (match[2] ?? '').replace(/&amp;/g, '&');
    response = await browser.post('/login/oauth/authorize', fields);
  }
  const code = new URL(response.headers.get('location') ?? 'missing:').searchParams.get('code');
  if (!code) throw new Error(`no code: ${response.status}`);
  return code;
}

/** A browser signed in as `user` through the login form (throws unless the form signs in). */
export async function signedIn(
  webUrl: string,
  user: { readonly login: string; readonly password: string },
): Promise<WebClient> {
  const browser = new WebClientClass(webUrl);
  await browser.get('/login');
  const response = await browser.post('/login', { login: user.login, password: user.password });
  if (response.status !== 303) throw new Error(`sign-in of ${user.login}: ${response.status}`);
  return browser;
}
