import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '#data/client';
import { formatToken } from '#domain/tokens';
import { admin } from '#test/admin';
import { createApp, createUser, personalToken, signedUpUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';
import type { WebClient } from '#test/web-client';

/**
 * `POST /credentials/revoke` (GitHub 2025) over HTTP: anyone reports leaked tokens without
 * authenticating; the answer is 202 whatever was sent; the valid tokens stop working and their
 * owner sees which on the settings page; a caller gets 60 reports an hour.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let app: Awaited<ReturnType<typeof createApp>>;
let mona: Awaited<ReturnType<typeof signedUpUser>>;

interface Call {
  readonly command: string;
  /** The call's input, to say which call was missing or extra when a count is wrong. */
  readonly input: unknown;
  readonly start: number;
  end: number;
}
let calls: Call[] = [];
const MIDDLEWARE = 'testCountReportCalls';

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'owner');
  app = await createApp(stack.endpointsFile, 'owner', 'Leaky App');
  const enabled = await admin(stack.endpointsFile, 'app', 'token-expiration', 'enable', app.clientId);
  if (enabled.code !== 0) throw new Error(enabled.stderr);
  mona = await signedUpUser(stack.webUrl, 'mona');
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const call: Call = {
        command: String(context.commandName).replace(/Command$/, ''),
        input: args.input,
        start: performance.now(),
        end: Number.POSITIVE_INFINITY,
      };
      calls.push(call);
      try {
        return await next(args);
      } finally {
        call.end = performance.now();
      }
    },
    { step: 'initialize', name: MIDDLEWARE },
  );
}, 60_000);
afterAll(async () => {
  db().middlewareStack.remove(MIDDLEWARE);
  await stack?.stop();
});

/** Reports from one address: the local server reads the caller's address from its socket. */
const report = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${stack.baseUrl}/credentials/revoke`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const apiAs = (token: string) =>
  fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } }).then((r) => r.status);

/** An application token with a refresh token, through the web flow as mona. */
async function appTokens(browser: WebClient): Promise<{ access: string; refresh: string }> {
  const path = `/login/oauth/authorize?${new URLSearchParams({ client_id: app.clientId, scope: 'gist', state: 's' })}`;
  let response = await browser.get(path);
  if (response.status === 200) {
    const fields: Record<string, string> = { decision: 'authorize', granted_scope: 'gist' };
    for (const match of browser.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      if (match[1] !== '_csrf') fields[match[1] ?? ''] = (match[2] ?? '').replace(/&amp;/g, '&');
    response = await browser.post('/login/oauth/authorize', fields);
  }
  const code = new URL(response.headers.get('location') ?? 'missing:').searchParams.get('code') ?? '';
  const exchanged = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, code }),
  });
  const body = await json(exchanged);
  expect(body.refresh_token).toMatch(/^ghr_/);
  return { access: body.access_token, refresh: body.refresh_token };
}

/** The calls of `act`, and how many ran one after another at most. */
async function counted<T>(act: () => Promise<T>) {
  calls = [];
  const result = await act();
  const taken = [...calls].sort((a, b) => a.start - b.start);
  calls = [];
  const depth: number[] = [];
  for (const [i, call] of taken.entries())
    depth[i] =
      1 +
      Math.max(0, ...taken.slice(0, i).map((before, j) => (before.end <= call.start ? (depth[j] ?? 0) : 0)));
  const byCommand: Record<string, number> = {};
  for (const { command } of taken) byCommand[command] = (byCommand[command] ?? 0) + 1;
  const listed = JSON.stringify(taken.map(({ command, input }) => ({ command, input })));
  return { result, byCommand, inSequence: Math.max(0, ...depth), listed };
}

/** A well-formed token that was never issued (right prefix, length and checksum). */
const unissued = (kind: 'personal' | 'oauth' | 'refresh', seed: number) =>
  formatToken(kind, `Unissued${String(seed).padStart(22, '0')}`);

describe('POST /credentials/revoke', () => {
  it('revokes every kind of valid token reported, answers 202 alike for anything, and tells the owner', async () => {
    const personal = await personalToken(stack.baseUrl, mona.auth, ['gist'], 'leaked in a gist');
    const kept = await personalToken(stack.baseUrl, mona.auth, ['gist'], 'kept');
    const first = await appTokens(mona.browser);
    const second = await appTokens(mona.browser);
    for (const token of [personal.token, kept.token, first.access, second.access])
      expect(await apiAs(token)).toBe(200);

    const noise = [
      'not a token',
      unissued('personal', 1),
      unissued('oauth', 2),
      unissued('refresh', 3),
      `${personal.token.slice(0, -1)}x`,
    ];
    const nothing = await report({ credentials: noise });
    expect(nothing.status).toBe(202);
    const nothingBody = await nothing.text();

    const {
      result: revoked,
      byCommand,
      inSequence,
      listed,
    } = await counted(() =>
      report({ credentials: [personal.token, first.access, second.refresh, personal.token, ...noise] }),
    );
    expect(revoked.status).toBe(202);
    // No oracle: the same answer, byte for byte, as for tokens that never existed.
    expect(await revoked.text()).toBe(nothingBody);
    expect(JSON.parse(nothingBody)).toEqual({});
    // What was revoked first (a failure then says which token survived), then what it cost.
    expect({
      personal: await apiAs(personal.token),
      first: await apiAs(first.access),
      // A reported refresh token takes its access token with it.
      second: await apiAs(second.access),
      kept: await apiAs(kept.token),
    }).toEqual({ personal: 401, first: 401, second: 401, kept: 200 });
    // Rate limit (1 UpdateItem), one BatchGetItem for the 7 well-formed tokens, then per revoked
    // token its owner's authorizations (Query) and one transaction with the notice.
    expect(byCommand, listed).toEqual({ UpdateItem: 1, BatchGetItem: 1, Query: 3, TransactWriteItems: 3 });
    expect(inSequence, listed).toBe(8);
    const refreshed = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: app.clientId,
        client_secret: app.clientSecret,
        grant_type: 'refresh_token',
        refresh_token: second.refresh,
      }),
    });
    expect((await json(refreshed)).error).toBe('bad_refresh_token');

    // The owner sees each revocation on the settings page.
    await mona.browser.get('/settings/tokens');
    const page = mona.browser.lastHtml;
    expect(page).toContain('Revoked because they were reported exposed');
    expect(page).toContain(
      `Personal access token “leaked in a gist”, ending <code>…${personal.token.slice(-8)}</code>`,
    );
    expect(page).toContain(
      `Token of the OAuth application <code>${app.clientId}</code>, ending <code>…${first.access.slice(-8)}</code>`,
    );
    expect(page).toContain(`Refresh token of the OAuth application <code>${app.clientId}</code>`);
    expect(page).toContain(`…${second.access.slice(-8)}`);
    expect(page).not.toContain(`…${kept.token.slice(-8)}</code>, revoked`);

    // Reporting them again changes nothing and says nothing.
    const again = await report({ credentials: [personal.token, first.access] });
    expect(again.status).toBe(202);
    expect(await again.text()).toBe(nothingBody);
  });

  it('reads 1,000 well-formed tokens in 10 BatchGetItem calls sent together, after the rate limit', async () => {
    const credentials = Array.from({ length: 1000 }, (_, i) =>
      unissued((['personal', 'oauth', 'refresh'] as const)[i % 3] ?? 'personal', 1000 + i),
    );
    const started = performance.now();
    const { result, byCommand, inSequence } = await counted(() => report({ credentials }));
    const elapsed = performance.now() - started;
    expect(result.status).toBe(202);
    expect(byCommand).toEqual({ UpdateItem: 1, BatchGetItem: 10 });
    expect(inSequence).toBe(2);
    console.info(`1,000 unissued credentials: ${elapsed.toFixed(0)} ms`);
  });

  it('revokes a reset token only by its new value: the old one is already worthless', async () => {
    const token = await personalToken(stack.baseUrl, mona.auth, ['gist'], 'reset before the report');
    const reset = await fetch(`${stack.baseUrl}/authorizations/${token.id}`, {
      method: 'PATCH',
      headers: { Authorization: mona.auth },
      body: JSON.stringify({ note: 'renamed' }),
    });
    expect(reset.status).toBe(200);
    const regenerated = await mona.browser.post(`/settings/tokens/${token.id}/regenerate`, {});
    expect(regenerated.status).toBeLessThan(400);
    const fresh = /ghp_[0-9A-Za-z]{36}/.exec(mona.browser.lastHtml)?.[0] ?? '';
    expect(fresh).not.toBe('');
    expect(await apiAs(token.token)).toBe(401);
    expect((await report({ credentials: [token.token] })).status).toBe(202);
    expect(await apiAs(fresh)).toBe(200);
  });

  it('refuses a body of the wrong shape with 422, and authenticated callers with 403', async () => {
    for (const body of [
      {},
      { credentials: 'ghp_x' },
      { credentials: [1, 2] },
      { credentials: [null] },
      { credentials: Array.from({ length: 1001 }, (_, i) => `token-${i}`) },
    ]) {
      const response = await report(body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(await json(response)).toMatchObject({
        message: 'Validation Failed',
        errors: expect.arrayContaining([
          expect.objectContaining({ resource: 'Credential', field: expect.stringMatching(/^credentials/) }),
        ]),
      });
    }
    expect((await report('[]')).status).toBe(400);
    expect((await report({ credentials: Array.from({ length: 1000 }, (_, i) => `token-${i}`) })).status).toBe(
      202,
    );

    const own = await personalToken(stack.baseUrl, mona.auth, ['gist']);
    const authenticated = await report({ credentials: [own.token] }, { Authorization: `token ${own.token}` });
    expect(authenticated.status).toBe(403);
    expect(await apiAs(own.token)).toBe(200);
    expect((await report({ credentials: [] }, { Authorization: 'token nonsense' })).status).toBe(401);
  });

  it('takes 60 reports an hour from one caller, then 429 with the rate-limit headers', async () => {
    // Earlier tests of this file used some of the caller's 60.
    let status = 202;
    let sent = 0;
    while (status === 202 && sent < 61) {
      status = (await report({ credentials: [] })).status;
      sent++;
    }
    expect(status).toBe(429);
    const limited = await report({ credentials: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('60');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await json(limited)).message).toMatch(/^API rate limit exceeded for /);
  });
});
