import { randomBytes } from 'node:crypto';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '#data/client';
import { launchBrowser } from '#local/browser';
import { WebClient } from '#local/web-client';
import { bodyOf, startFloor } from './floor.ts';
import { median, ms, percentile } from './measure.ts';
import {
  BENCH_PASSWORD,
  basicAuth,
  countDynamoDbCalls,
  createBenchAccounts,
  startBenchStack,
} from './support.ts';

const SCOPE = 'repo';

/** Issue 19's targets for the contended exchange phase. */
export const EXCHANGE_TARGETS = { perSecond: 250, ofFloor: 0.5 } as const;

export interface OAuthBenchOptions {
  /** Codes minted and then exchanged under load, each once, per round. */
  readonly codes: number;
  /**
   * Rounds of minting, exchanging and the floor, in that order: a phase of a few hundred requests
   * lasts a second or two, and one run of it scatters by ±10%, so the rates are the rounds' median.
   */
  readonly rounds: number;
  /** Exchanges (and mints) in flight at any time. */
  readonly concurrency: number;
  /** Exchanges sent one after another first, each one's DynamoDB calls recorded (crosses the token limit). */
  readonly countedExchanges: number;
  /** Runs of the whole browser flow. */
  readonly browserRuns: number;
}

/** A phase of requests sent with a fixed concurrency, each once (or such phases, one per round, merged). */
export interface PhaseResult {
  readonly requests: number;
  readonly failures: readonly string[];
  /** Requests ÷ wall time; merged: the median of the rounds' rates. */
  readonly rps: number;
  /** Each round's rate, in round order. */
  readonly rounds: readonly number[];
  /** Every request's latency, in milliseconds. */
  readonly latencies: readonly number[];
  readonly p50: number;
  readonly p99: number;
  /** Every DynamoDB call the service made during the phase, by command. */
  readonly calls: ReadonlyMap<string, number>;
  /** The calls themselves (command and transaction size). */
  readonly records: readonly CallRecord[];
}

/** The DynamoDB calls of one sequential exchange: `GetItem ×3, TransactWriteItems ×1 (4 actions)`. */
export interface ExchangeCalls {
  readonly exchange: number;
  readonly signature: string;
  readonly total: number;
}

export interface BrowserRun {
  readonly launchMs: number;
  /** Step name → milliseconds, in flow order. */
  readonly steps: readonly (readonly [string, number])[];
  readonly totalMs: number;
}

export interface OAuthBenchResult {
  readonly options: OAuthBenchOptions;
  readonly loadAverage: number;
  readonly mint: PhaseResult;
  readonly sequential: readonly ExchangeCalls[];
  readonly exchange: PhaseResult;
  /** The floor: bare `node:http` + one TransactWriteItems of `floorActions` actions, same load. */
  readonly floor: PhaseResult;
  readonly floorActions: number;
  /** The median of the rounds' exchange rates ÷ floor rates. */
  readonly ofFloor: number;
  /** Tokens the user still holds for the app afterwards (the limit is 10). */
  readonly tokensLeft: number;
  readonly browser: readonly BrowserRun[];
}

interface CallRecord {
  readonly command: string;
  readonly actions: number;
}

const byCommand = (records: readonly CallRecord[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const { command } of records) counts.set(command, (counts.get(command) ?? 0) + 1);
  return counts;
};

/** `GetItem ×3, TransactWriteItems ×1 (5 actions)` */
function signatureOf(records: readonly CallRecord[]): string {
  const parts = [...byCommand(records)].sort(([a], [b]) => a.localeCompare(b));
  return parts
    .map(([command, n]) => {
      const actions = records.filter((r) => r.command === command && command.startsWith('Transact'));
      return `${command} ×${n}${actions.length > 0 ? ` (${actions.map((r) => r.actions).join('+')} actions)` : ''}`;
    })
    .join(', ');
}

/**
 * The exchange's floor: a bare `node:http` server in the bench process whose handler reads the
 * JSON body and sends one TransactWriteItems of `actions` puts of fresh items (as many actions as
 * the service's exchange sends) to the same DynamoDB Local table, then answers a token-shaped JSON.
 */
function startFloorServer(dynamodbEndpoint: string, tableName: string, actions: number) {
  let n = 0;
  return startFloor(dynamodbEndpoint, '/login/oauth/access_token', async (client, request) => {
    const { code } = JSON.parse(await bodyOf(request)) as { code?: string };
    const id = `${code}-${++n}`;
    await client.send(
      new TransactWriteCommand({
        TransactItems: Array.from({ length: actions }, (_, i) => ({
          Put: {
            TableName: tableName,
            Item: { PK: `FLOOR#${id}`, SK: `ITEM#${i}`, createdAt: new Date().toISOString() },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        })),
      }),
    );
    return { body: { access_token: `gho_${id}`, token_type: 'bearer', scope: SCOPE } };
  });
}

/** The most frequent action count of the transactions among `records`. */
function usualActions(records: readonly CallRecord[]): number {
  const counts = new Map<number, number>();
  for (const r of records)
    if (r.command === 'TransactWriteItems') counts.set(r.actions, (counts.get(r.actions) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 1;
}

/** The OAuth client's callback for the browser flow: answers a small page, nothing else. */
async function startCallbackServer(): Promise<{ origin: string; stop(): Promise<void> }> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>Client app</title><h1>Callback received</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One request on a kept-alive loopback connection; resolves with the status and body. */
function send(
  agent: Agent,
  url: URL,
  options: { method: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        method: options.method,
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        headers: { ...options.headers, Connection: 'keep-alive' },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('no response within 30 s')));
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Runs `work` once per item with `concurrency` workers, timing each; a failure is recorded (its
 * text) and does not stop the phase, so that the report shows how many there were.
 */
async function runPhase<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<string | undefined>,
  counter: { take(): CallRecord[] },
): Promise<PhaseResult> {
  counter.take();
  const latencies: number[] = [];
  const failures: string[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      const sent = performance.now();
      const failure = await work(item).catch((error: unknown) => String(error));
      latencies.push(performance.now() - sent);
      if (failure !== undefined) failures.push(failure);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const records = counter.take();
  const rps = items.length / seconds;
  return {
    requests: items.length,
    failures,
    rps,
    rounds: [rps],
    latencies,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    calls: byCommand(records),
    records,
  };
}

/** The rounds' phases as one: counts and calls added, latencies pooled, the rate the rounds' median. */
function merged(phases: readonly PhaseResult[]): PhaseResult {
  const latencies = phases.flatMap((phase) => phase.latencies);
  const rounds = phases.flatMap((phase) => phase.rounds);
  const calls = new Map<string, number>();
  for (const phase of phases)
    for (const [command, n] of phase.calls) calls.set(command, (calls.get(command) ?? 0) + n);
  return {
    requests: phases.reduce((sum, phase) => sum + phase.requests, 0),
    failures: phases.flatMap((phase) => phase.failures),
    rps: median(rounds),
    rounds,
    latencies,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    calls,
    records: phases.flatMap((phase) => phase.records),
  };
}

const codeOf = (location: string | null, origin: string): string =>
  new URL(location ?? 'missing:', origin).searchParams.get('code') ?? '';

/**
 * One run of the browser flow a new user goes through: authorize signed out → sign-in page →
 * "Create an account" → sign-up → consent → Authorize → the client's callback → the client
 * exchanges the code → `GET /user` with the token. Browser launch is timed apart.
 */
async function browserFlow(
  webUrl: string,
  apiUrl: string,
  app: { clientId: string; clientSecret: string; name: string },
  callbackOrigin: string,
): Promise<BrowserRun> {
  const launched = performance.now();
  const browser = await launchBrowser();
  const launchMs = performance.now() - launched;
  const steps: [string, number][] = [];
  let mark = performance.now();
  const step = (name: string) => {
    const now = performance.now();
    steps.push([name, now - mark]);
    mark = now;
  };
  const started = mark;
  try {
    const page = await browser.newPage();
    step('new page');
    const state = randomBytes(16).toString('hex');
    const login = `flow-${randomBytes(4).toString('hex')}`;
    const at = (path: string) => (url: URL) => url.pathname === path;
    await page.goto(
      `${webUrl}/login/oauth/authorize?${new URLSearchParams({ client_id: app.clientId, scope: 'user repo', state })}`,
    );
    await page.waitForURL(at('/login'));
    step('authorize → sign-in page');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.waitForURL(at('/signup'));
    step('→ sign-up page');
    await page.getByLabel('Username', { exact: true }).fill(login);
    await page.getByLabel('Email', { exact: true }).fill(`${login}@example.com`);
    await page.getByLabel('Password', { exact: true }).fill(BENCH_PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(at('/login/oauth/authorize'));
    step('sign-up → consent page');
    await page.getByRole('button', { name: `Authorize ${app.name}` }).click();
    await page.waitForURL((url) => url.origin === callbackOrigin && url.pathname === '/callback');
    step('Authorize → callback');
    const landed = new URL(page.url());
    if (landed.searchParams.get('state') !== state) throw new Error('the callback lost the state');

    const exchanged = await fetch(`${webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_id: app.clientId,
        client_secret: app.clientSecret,
        code: landed.searchParams.get('code'),
      }),
    });
    const token = (await exchanged.json()) as { access_token?: string; error?: string };
    if (!token.access_token) throw new Error(`exchange failed: ${JSON.stringify(token)}`);
    step('code exchange');
    const me = await fetch(`${apiUrl}/user`, { headers: { Authorization: `token ${token.access_token}` } });
    const user = (await me.json()) as { login?: string };
    if (me.status !== 200 || user.login !== login) throw new Error(`GET /user answered ${me.status}`);
    step('GET /user');
    return { launchMs, steps, totalMs: performance.now() - started };
  } finally {
    await browser.close();
  }
}

/**
 * The OAuth web flow on the local stack started in this process (its own in-memory DynamoDB
 * Local): code exchanges under a fixed concurrency for one user, application and scope set, and
 * the whole flow a new user goes through in Chromium.
 */
export async function measureOAuth(options: OAuthBenchOptions): Promise<OAuthBenchResult> {
  if (options.codes > 5_000 || options.countedExchanges > 100 || options.browserRuns > 10)
    throw new Error('the OAuth bench is bounded: at most 5000 codes, 100 counted exchanges, 10 browser runs');
  const loadAverage = loadavg()[0] ?? Number.NaN;
  const { stack, endpointsFile, stop } = await startBenchStack('oauth');
  const callback = await startCallbackServer();
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const counter = countDynamoDbCalls(
    db(),
    (command, input): CallRecord => ({
      command,
      actions: (input as { TransactItems?: unknown[] }).TransactItems?.length ?? 1,
    }),
  );
  try {
    const loopback = `http://127.0.0.1:${new URL(stack.webUrl).port}`;

    const app = await createBenchAccounts(endpointsFile, `${callback.origin}/callback`);

    // Sign in over HTTP and authorize once through the consent form; once that code is exchanged,
    // every authorize request for the same scope answers 302 with a fresh code.
    const web = new WebClient(stack.webUrl);
    await web.get('/login');
    const signedIn = await web.post('/login', { login: 'bench', password: BENCH_PASSWORD });
    if (signedIn.status !== 303) throw new Error(`POST /login answered ${signedIn.status}`);
    const authorizeParams = { client_id: app.clientId, scope: SCOPE };
    const authorizePath = `/login/oauth/authorize?${new URLSearchParams(authorizeParams)}`;
    const consent = await web.get(authorizePath);
    if (consent.status !== 200) throw new Error(`the consent page answered ${consent.status}`);
    const approved = await web.post('/login/oauth/authorize', {
      ...authorizeParams,
      granted_scope: SCOPE,
      decision: 'authorize',
    });
    if (approved.status !== 303) throw new Error(`the consent POST answered ${approved.status}`);
    const firstCode = codeOf(approved.headers.get('location'), stack.webUrl);

    const mintOne = async (): Promise<string> => {
      const response = await web.get(authorizePath);
      const code = codeOf(response.headers.get('location'), stack.webUrl);
      if (response.status !== 302 || !code) throw new Error(`authorize answered ${response.status}`);
      return code;
    };
    const exchangeAt =
      (exchangeUrl: URL) =>
      async (code: string): Promise<string | undefined> => {
        const { status, body } = await send(agent, exchangeUrl, {
          method: 'POST',
          headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
          body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, code }),
        });
        const parsed = status === 200 ? (JSON.parse(body) as { access_token?: string }) : {};
        return parsed.access_token ? undefined : `${status} ${body.slice(0, 200)}`;
      };
    const exchangeOne = exchangeAt(new URL('/login/oauth/access_token', loopback));

    // One after another first: what each exchange costs below the limit and once the 11th token
    // revokes the oldest in the same transaction. The grant exists once the first code has been
    // exchanged (a grant is its tokens), so only then does authorize skip the consent page.
    const sequential: ExchangeCalls[] = [];
    for (let index = 0; index < options.countedExchanges; index++) {
      const code = index === 0 ? firstCode : await mintOne();
      counter.take();
      const failure = await exchangeOne(code);
      if (failure) throw new Error(`sequential exchange ${index + 1} failed: ${failure}`);
      const calls = counter.take();
      sequential.push({ exchange: index + 1, signature: signatureOf(calls), total: calls.length });
    }

    // Each round: mint, exchange, then the floor under the same closed loop (as many requests, as
    // many in flight, one transaction each of the size the service's exchanges sent most often).
    const mints: PhaseResult[] = [];
    const exchanges: PhaseResult[] = [];
    const floors: PhaseResult[] = [];
    let floorServer: Awaited<ReturnType<typeof startFloorServer>> | undefined;
    let floorCounter: ReturnType<typeof countDynamoDbCalls<CallRecord>> | undefined;
    let floorActions = 0;
    try {
      for (let round = 0; round < options.rounds; round++) {
        const minted: string[] = [];
        mints.push(
          await runPhase(
            Array.from({ length: options.codes }, (_, i) => i),
            options.concurrency,
            async () => {
              minted.push(await mintOne());
              return undefined;
            },
            counter,
          ),
        );
        const exchange = await runPhase(minted, options.concurrency, exchangeOne, counter);
        exchanges.push(exchange);
        if (!floorServer) {
          floorActions = usualActions(exchange.records);
          floorServer = await startFloorServer(stack.dynamodbEndpoint, stack.tableName, floorActions);
          floorCounter = countDynamoDbCalls(
            floorServer.client,
            (command, input): CallRecord => ({
              command,
              actions: (input as { TransactItems?: unknown[] }).TransactItems?.length ?? 1,
            }),
          );
        }
        floors.push(
          await runPhase(
            minted,
            options.concurrency,
            exchangeAt(new URL(floorServer.url)),
            floorCounter as ReturnType<typeof countDynamoDbCalls<CallRecord>>,
          ),
        );
      }
    } finally {
      floorCounter?.remove();
      await floorServer?.stop();
    }
    const ofFloor = median(
      exchanges.map((exchange, round) => exchange.rps / (floors[round] as PhaseResult).rps),
    );

    const list = await fetch(`${loopback}/api/v3/authorizations`, {
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
    });
    const tokensLeft = ((await list.json()) as Array<{ app: { client_id: string } }>).filter(
      (a) => a.app.client_id === app.clientId,
    ).length;

    counter.remove();
    const browser: BrowserRun[] = [];
    for (let run = 0; run < options.browserRuns; run++)
      browser.push(await browserFlow(stack.webUrl, stack.baseUrl, app, callback.origin));

    return {
      options,
      loadAverage,
      mint: merged(mints),
      sequential,
      exchange: merged(exchanges),
      floor: merged(floors),
      floorActions,
      ofFloor,
      tokensLeft,
      browser,
    };
  } finally {
    counter.remove();
    agent.destroy();
    await callback.stop();
    await stop();
  }
}

const total = (calls: ReadonlyMap<string, number>) => [...calls.values()].reduce((a, b) => a + b, 0);

/** `7.4 — GetItem 3.0, Query 1.4, …` per request. */
function perRequest(phase: PhaseResult): string {
  const parts = [...phase.calls]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([command, n]) => `${command} ${(n / phase.requests).toFixed(2)}`);
  return `${(total(phase.calls) / phase.requests).toFixed(2)} — ${parts.join(', ')}`;
}

/** Consecutive exchanges with the same calls, as ranges: `exchanges 1–10: …`. */
function sequentialLines(calls: readonly ExchangeCalls[]): string[] {
  const lines: string[] = [];
  let from = 0;
  for (let i = 1; i <= calls.length; i++) {
    if (i < calls.length && calls[i]?.signature === calls[from]?.signature) continue;
    const first = calls[from] as ExchangeCalls;
    const range = i - 1 === from ? `exchange ${first.exchange}` : `exchanges ${first.exchange}–${i}`;
    lines.push(`- ${range}: ${first.total} calls — ${first.signature}`);
    from = i;
  }
  return lines;
}

/** The section's markdown. */
export function oauthReport(result: OAuthBenchResult, machine: string): string {
  const { options, mint, exchange, floor, browser } = result;
  const range = (phase: PhaseResult) =>
    `${Math.min(...phase.rounds).toFixed(0)}–${Math.max(...phase.rounds).toFixed(0)}`;
  const phaseRow = (label: string, phase: PhaseResult) =>
    `| ${label} | ${phase.requests} | ${phase.failures.length} | ${phase.rps.toFixed(0)} (${range(phase)}) | ${ms(phase.p50)} | ${ms(phase.p99)} | ${perRequest(phase)} |`;
  const failureLines = [mint, exchange].flatMap((phase, i) =>
    phase.failures.length === 0
      ? []
      : [
          `- ${i === 0 ? 'Minting' : 'Exchange'} failures (first of ${phase.failures.length}): \`${phase.failures[0]}\``,
        ],
  );
  const stepNames = browser[0]?.steps.map(([name]) => name) ?? [];
  const stepRow = (name: string, values: number[]) =>
    `| ${name} | ${ms(median(values))} | ${ms(Math.min(...values))} | ${ms(Math.max(...values))} |`;
  const transactPerExchange = (exchange.calls.get('TransactWriteItems') ?? 0) / exchange.requests;
  const { ofFloor } = result;
  const met = (ok: boolean) => (ok ? 'met' : 'not met');
  return [
    `Measured ${machine}: the local stack started in the bench process (\`startLocalStack\`, its own in-memory DynamoDB Local, real handlers); the 1-minute load average was ${result.loadAverage.toFixed(1)} before the bench started.`,
    '',
    '### Code exchanges',
    '',
    `One user signs in over HTTP (\`POST /login\` with the CSRF field and cookie) and authorizes the application once for \`${SCOPE}\` through the consent form; once that first code is exchanged (the grant is its tokens), every \`GET /login/oauth/authorize\` for the same scope answers 302 with a fresh code, no page. ` +
      `${options.countedExchanges} codes (that first one, then codes minted one by one) are exchanged one after another (DynamoDB calls recorded per exchange), then, in each of ${options.rounds} rounds, ${options.codes} more codes are minted with ${options.concurrency} requests in flight and exchanged the same way (\`POST /login/oauth/access_token\`, JSON, client id and secret in the body), each code once, on kept-alive connections to 127.0.0.1. ` +
      "Every exchange mints a token for the same user, application and scope set, which keeps at most 10 tokens: from the 11th on, each exchange also revokes the oldest in its transaction (the one the grant's token ring names, a different one for each concurrent exchange). That is part of what is measured. " +
      "The floor is a bare `node:http` server in the bench process that reads the same JSON body and sends one TransactWriteItems with as many actions as the exchanges' transactions had most often (puts of fresh items) to the same DynamoDB Local table, under the same closed loop (as many requests, as many in flight), after the exchanges of each round. " +
      "Per second: requests ÷ wall time of the round's phase, the rounds' median (min–max); against the floor: the median of the rounds' ratios; p50/p99: over every request of the rounds; DynamoDB calls: every SDK call the service made in the phase (a middleware on `db().middlewareStack`, step `initialize`, so retries inside the SDK are not counted) ÷ requests.",
    '',
    '| Phase | Requests | Failed | Per second | p50 | p99 | DynamoDB calls/request |',
    '|---|---|---|---|---|---|---|',
    phaseRow('`GET /login/oauth/authorize` (already granted → 302 with a code)', mint),
    phaseRow('`POST /login/oauth/access_token` (code → token)', exchange),
    phaseRow(`floor: bare \`node:http\`, one TransactWriteItems of ${result.floorActions} actions`, floor),
    '',
    `- Exchanges per second: ${exchange.rps.toFixed(0)} (target at least ${EXCHANGE_TARGETS.perSecond}: ${met(exchange.rps >= EXCHANGE_TARGETS.perSecond)}); against the floor: ${ofFloor.toFixed(2)}× (target at least ${EXCHANGE_TARGETS.ofFloor}×: ${met(ofFloor >= EXCHANGE_TARGETS.ofFloor)}).`,
    ...failureLines,
    `- TransactWriteItems per exchange under load: ${transactPerExchange.toFixed(2)} (1.00 would mean no transaction was cancelled and retried).`,
    `- Tokens the user holds for the application afterwards: ${result.tokensLeft} (limit 10).`,
    `- DynamoDB calls of the ${options.countedExchanges} sequential exchanges:`,
    ...sequentialLines(result.sequential).map((line) => `  ${line}`),
    '',
    '### The whole browser flow',
    '',
    `A new user in Chromium (playwright-core driving \`/usr/bin/chromium\`, headless): authorize signed out → sign-in page → "Create an account" → sign-up form → consent page → Authorize → the client's callback (a \`node:http\` server on 127.0.0.1), then the client exchanges the code and calls \`GET /api/v3/user\` with the token. ${browser.length} runs, each with a fresh browser and a new user; median (min–max).`,
    '',
    '| Step | median | min | max |',
    '|---|---|---|---|',
    stepRow(
      'browser launch',
      browser.map((r) => r.launchMs),
    ),
    ...stepNames.map((name, i) =>
      stepRow(
        name,
        browser.map((r) => r.steps[i]?.[1] ?? Number.NaN),
      ),
    ),
    stepRow(
      '**flow without launch**',
      browser.map((r) => r.totalMs),
    ),
    stepRow(
      '**flow with launch**',
      browser.map((r) => r.totalMs + r.launchMs),
    ),
  ].join('\n');
}
