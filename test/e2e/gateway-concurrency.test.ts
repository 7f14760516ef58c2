import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalHttpServer, startHttpServer } from '#local/http-server';
import { type ConcurrencyLimit, concurrencyLimit } from '#local/lambda-concurrency';
import { GATEWAY_ERROR_BODIES, RETRY_AFTER_SECONDS } from '#shared/errors';
import { ROUTES } from '#shared/routes';
import { createUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

/**
 * A route's function at its concurrency limit (its reserved concurrency, or the account's): Lambda
 * refuses the invocation beyond it (429 `TooManyRequestsException`) before any code runs, and API
 * Gateway answers with its `INTEGRATION_FAILURE` gateway response, which the stack makes GitHub's
 * 503 with `Retry-After`. Here a second local API Gateway, in front of the same functions and
 * table, gives the function of `POST /authorizations` (a password check: scrypt, long enough for
 * requests sent together to overlap) a concurrency of 1; every other route has none.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let gateway: LocalHttpServer;
let limit: ConcurrencyLimit;
let owner: { login: string; auth: string };

const CREATE = ROUTES.find((route) => route.method === 'POST' && route.handler === 'authorizations/create');

const create = (note: string) =>
  fetch(`${gateway.url}/api/v3/authorizations`, {
    method: 'POST',
    headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ scopes: ['repo'], note }),
  });

/** The notes of the owner's authorizations, through the stack's own gateway. */
async function notes(): Promise<string[]> {
  const listed = await fetch(`${stack.baseUrl}/authorizations?per_page=100`, {
    headers: { Authorization: owner.auth },
  });
  expect(listed.status).toBe(200);
  return ((await json(listed)) as { note: string }[]).map(({ note }) => note).sort();
}

beforeAll(async () => {
  if (!CREATE) throw new Error('the route table has no POST /authorizations');
  stack = await startTestStack();
  owner = await createUser(stack.endpointsFile, 'throttled');
  limit = concurrencyLimit(1);
  gateway = await startHttpServer({
    routes: ROUTES,
    port: 0,
    gitFrontend: stack.gitFrontendUrl,
    concurrency: (route) => (route === CREATE ? limit : undefined),
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await stack?.stop();
});

describe("the local API Gateway at a route function's concurrency limit", () => {
  it("refuses the invocations beyond it with GitHub's 503 and Retry-After, and runs none of them", async () => {
    const sent = Array.from({ length: 6 }, (_, i) => `burst-${i}`);
    const answers = await Promise.all(sent.map(create));
    const statuses = answers.map((answer) => answer.status);
    const refused = answers.filter((answer) => answer.status === 503);
    expect(statuses.filter((status) => status === 201).length, String(statuses)).toBeGreaterThan(0);
    expect(refused.length, String(statuses)).toBeGreaterThan(0);
    expect(
      statuses.every((status) => status === 201 || status === 503),
      String(statuses),
    ).toBe(true);
    for (const answer of refused) {
      expect(answer.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await json(answer)).toEqual(GATEWAY_ERROR_BODIES.serviceUnavailable);
    }
    // One invocation at a time ran, each refusal was Lambda's, and a refused request wrote nothing.
    expect(limit.peak).toBe(1);
    expect(limit.refused).toBe(refused.length);
    const created = sent.filter((_, i) => statuses[i] === 201);
    expect(await notes()).toEqual(created.sort());
  });

  it('answers again once the invocation under way has ended, and limits no other function', async () => {
    const list = () =>
      fetch(`${gateway.url}/api/v3/authorizations`, { headers: { Authorization: owner.auth } });
    const [again, ...listed] = await Promise.all([create('after-the-burst'), list(), list(), list()]);
    expect(again?.status).toBe(201);
    expect(listed.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(limit.running).toBe(0);
  });
});
