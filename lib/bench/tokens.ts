import { loadavg } from 'node:os';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, documentClientOf } from '#data/client';
import { tokenKey } from '#data/keys';
import { hashToken } from '#domain/tokens';
import { localDynamoDbClient } from '#local/dynamodb-local';
import { type Handler, startHttpServer } from '#local/http-server';
import { header } from '#shared/credentials';
import type { Route } from '#shared/routes';
import { type FloorAnswer, startFloor } from './floor.ts';
import { type LoadResult, runLoad } from './load.ts';
import { median, ms, percentile } from './measure.ts';
import {
  BENCH_PASSWORD,
  basicAuth,
  countDynamoDbCalls,
  createBenchAccounts,
  startBenchStack,
} from './support.ts';

export interface TokenBenchOptions {
  readonly concurrency: number;
  /** Unmeasured load per target before the first round: DynamoDB Local's JIT and V8's warm up. */
  readonly prewarmMs: number;
  /** Each run's own warm-up, then its measured duration. */
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Rounds of one run per target, in rotating order, so that drift and noise hit every target alike. */
  readonly rounds: number;
  /** Sequential requests per target over which DynamoDB calls are counted. */
  readonly countedRequests: number;
}

/** DynamoDB calls one request made: `GetItem` → count, and `GetItem TOKEN/TOKEN strong` → count. */
export interface CallCount {
  readonly total: number;
  readonly byCommand: ReadonlyMap<string, number>;
  readonly byItem: ReadonlyMap<string, number>;
}

/** The calls of each of a series of identical requests, summarized. */
export interface CallProfile {
  readonly requests: number;
  /** What most of the requests made. */
  readonly usual: CallCount;
  /** The requests (1-based) that made other calls, and what they made. */
  readonly unusual: readonly { readonly request: number; readonly calls: CallCount }[];
}

export interface RouteResult {
  readonly label: string;
  /** One load run per round, in round order. */
  readonly runs: readonly LoadResult[];
  readonly calls: CallProfile;
}

export interface TokenBenchResult {
  readonly options: TokenBenchOptions;
  /** The 1-minute load average before the bench started: other work on the machine skews the numbers. */
  readonly loadAverage: number;
  readonly user: RouteResult;
  /** `GET /user` with an OAuth application's token: its application's suspension state is read too. */
  readonly appUser: RouteResult;
  readonly check: RouteResult;
  readonly floor: RouteResult;
  /** The floor answering what `GET /user` answers (its headers and body). */
  readonly answerFloor: RouteResult;
  /** That floor as a Lambda handler behind the local API Gateway. */
  readonly gatewayFloor: RouteResult;
  /** The size of that answer. */
  readonly answer: { readonly headers: number; readonly bodyBytes: number };
}

/** A request the bench sends: where, with which credentials (and, for a POST, which body). */
export interface Target {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
}

export interface CallRecord {
  readonly command: string;
  readonly item: string;
}

/** `TOKEN#<hash>`, `TOKEN` → `TOKEN/TOKEN`: the entity, without the hash or login. */
function itemName(key: { PK?: unknown; SK?: unknown }): string {
  const entity = (value: unknown) => String(value ?? '?').split('#')[0];
  return `${entity(key.PK)}/${entity(key.SK)}`;
}

export type CommandInput = {
  Key?: { PK?: unknown; SK?: unknown };
  ConsistentRead?: boolean;
  TransactItems?: Array<Record<string, { Key?: { PK?: unknown; SK?: unknown } } | undefined>>;
  RequestItems?: Record<string, { Keys?: Array<{ PK?: unknown; SK?: unknown }>; ConsistentRead?: boolean }>;
};

/**
 * `GetItem TOKEN/TOKEN strong`, `BatchGetItem [APP/APP, TOKEN/TOKEN] strong`,
 * `TransactWriteItems [Update TOKEN/TOKEN, Update USER/AUTH]`.
 */
export function describeCall(command: string, input: CommandInput): string {
  if (input.Key) return `${command} ${itemName(input.Key)}${input.ConsistentRead ? ' strong' : ''}`;
  if (input.RequestItems) {
    const tables = Object.values(input.RequestItems);
    const keys = tables.flatMap((table) => table.Keys ?? []).map((key) => itemName(key));
    return `${command} [${keys.join(', ')}]${tables.every((table) => table.ConsistentRead) ? ' strong' : ''}`;
  }
  if (input.TransactItems) {
    const actions = input.TransactItems.flatMap((entry) =>
      Object.entries(entry).map(([action, body]) => `${action} ${itemName(body?.Key ?? {})}`),
    );
    return `${command} [${actions.join(', ')}]`;
  }
  return command;
}

const tally = (keys: readonly string[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
};

const countOf = (calls: readonly CallRecord[]): CallCount => ({
  total: calls.length,
  byCommand: tally(calls.map((call) => call.command)),
  byItem: tally(calls.map((call) => call.item)),
});

/** Sends `requests` requests one after another and summarizes the calls each made. */
export async function callsPerRequest(
  counter: { take(): CallRecord[] },
  { url, headers, method, body }: Target,
  requests: number,
): Promise<CallProfile> {
  const perRequest: string[] = [];
  counter.take();
  for (let i = 0; i < requests; i++) {
    const response = await fetch(url, { headers, ...(method ? { method } : {}), ...(body ? { body } : {}) });
    if (response.status !== 200)
      throw new Error(`${method ?? 'GET'} ${url} answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
    perRequest.push(JSON.stringify(counter.take().sort((a, b) => a.item.localeCompare(b.item))));
  }
  const frequency = tally(perRequest);
  const usual = [...frequency].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '[]';
  const parse = (signature: string) => countOf(JSON.parse(signature) as CallRecord[]);
  return {
    requests,
    usual: parse(usual),
    unusual: perRequest.flatMap((signature, index) =>
      signature === usual ? [] : [{ request: index + 1, calls: parse(signature) }],
    ),
  };
}

/**
 * The floor: a bare `node:http` server that does what no token-authenticated route can avoid, one
 * strongly consistent GetItem of the token's item, and answers JSON. Its own client, configured as
 * `db()` is, so that its calls are counted apart from the service's.
 */
export const startFloorServer = (dynamodbEndpoint: string, tableName: string) =>
  startFloor(dynamodbEndpoint, '/', async (client, request) => {
    const item = await readToken(client, tableName, request.headers.authorization);
    return item
      ? { body: { login: item.login, scopes: item.scopes } }
      : { status: 401, body: { message: 'Bad credentials' } };
  });

/** Headers a floor does not copy from the service's answer: the connection's, and the length Node sets. */
const NOT_COPIED = new Set([
  'date',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'content-type',
]);

/** What the service answered to `target`: the headers a floor can answer too, and the JSON body. */
async function answerOf(target: Target): Promise<Required<Pick<FloorAnswer, 'headers' | 'body'>>> {
  const response = await fetch(target.url, { headers: target.headers });
  if (response.status !== 200) throw new Error(`${target.url} answered ${response.status}`);
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!NOT_COPIED.has(name)) headers[name] = value;
  return { headers, body: await response.json() };
}

/** The floor's one GetItem, for a token presented as `token <token>`; undefined when there is none. */
async function readToken(
  client: DynamoDBDocumentClient,
  tableName: string,
  authorization: string | undefined,
): Promise<Record<string, unknown> | undefined> {
  const token = /^token (\S+)$/i.exec(authorization ?? '')?.[1] ?? '';
  const { Item } = await client.send(
    new GetCommand({ TableName: tableName, Key: tokenKey(hashToken(token)), ConsistentRead: true }),
  );
  return Item;
}

/**
 * The floor, answering what the service answers: the same one GetItem, then the headers and body
 * `GET /user` answered (stringified per request, as the service does). Between the floor and the
 * service, this is what the size of GitHub's answer costs.
 */
export const startAnswerFloor = (
  dynamodbEndpoint: string,
  tableName: string,
  answer: Required<Pick<FloorAnswer, 'headers' | 'body'>>,
) =>
  startFloor(dynamodbEndpoint, '/', async (client, request) =>
    (await readToken(client, tableName, request.headers.authorization))
      ? answer
      : { status: 401, body: { message: 'Bad credentials' } },
  );

const GATEWAY_FLOOR: Route = {
  method: 'GET',
  path: '/floor',
  handler: 'bench/gateway-floor',
  auth: 'none',
  scopes: [],
  media: 'json',
  table: 'RO',
};

/**
 * That answering floor as a bare Lambda handler (no middleware) behind the local API Gateway
 * (`lib/local/http-server.ts`): the proxy event, the zip function's runtime, the payload and time
 * limits, the result written back. Between the floor and the service, this is what the local
 * stand-in for API Gateway and Lambda's invocation costs; in AWS that work is API Gateway's and the
 * Lambda runtime's, not the function's.
 */
export async function startGatewayFloor(
  dynamodbEndpoint: string,
  tableName: string,
  answer: Required<Pick<FloorAnswer, 'headers' | 'body'>>,
): Promise<{ url: string; client: DynamoDBDocumentClient; stop(): Promise<void> }> {
  const client = documentClientOf(localDynamoDbClient(dynamodbEndpoint));
  const handler: Handler = async (event) =>
    (await readToken(client, tableName, header(event, 'authorization')))
      ? {
          statusCode: 200,
          headers: { 'Content-Type': 'application/json; charset=utf-8', ...answer.headers },
          body: JSON.stringify(answer.body),
        }
      : { statusCode: 401, headers: {}, body: '{"message":"Bad credentials"}' };
  const server = await startHttpServer({
    routes: [GATEWAY_FLOOR],
    port: 0,
    handlers: { [GATEWAY_FLOOR.handler]: handler },
  });
  return {
    url: `http://127.0.0.1:${server.port}${GATEWAY_FLOOR.path}`,
    client,
    stop: async () => {
      await server.stop();
      client.destroy();
    },
  };
}

/** POST /authorizations with Basic; returns the new token. */
export async function createToken(
  baseUrl: string,
  basic: string,
  body: Record<string, unknown>,
): Promise<string> {
  const response = await fetch(`${baseUrl}/authorizations`, {
    method: 'POST',
    headers: { Authorization: basic },
    body: JSON.stringify(body),
  });
  if (response.status !== 201)
    throw new Error(`token not created: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

/**
 * Token-authenticated requests on the local stack started in this process (its own DynamoDB
 * Local): DynamoDB calls per request, then throughput and latency of `GET /user` with a token, of
 * the application-side check endpoint, and of the one-GetItem floor, under the same load loop.
 */
export async function measureTokens(options: TokenBenchOptions): Promise<TokenBenchResult> {
  const loadAverage = loadavg()[0] ?? Number.NaN;
  const { stack, endpointsFile, stop } = await startBenchStack('tokens');
  let floor: Awaited<ReturnType<typeof startFloorServer>> | undefined;
  let answerFloor: Awaited<ReturnType<typeof startAnswerFloor>> | undefined;
  let gatewayFloor: Awaited<ReturnType<typeof startGatewayFloor>> | undefined;
  try {
    const origin = `http://127.0.0.1:${new URL(stack.baseUrl).port}`;
    const api = `${origin}/api/v3`;

    const password = BENCH_PASSWORD;
    const { clientId, clientSecret } = await createBenchAccounts(
      endpointsFile,
      'https://bench.example/callback',
    );
    const basic = basicAuth('bench', password);
    const personal = await createToken(api, basic, { note: 'bench personal', scopes: ['user'] });
    const oauth = await createToken(api, basic, {
      note: 'bench app',
      client_id: clientId,
      client_secret: clientSecret,
      scopes: ['repo'],
    });

    const userRoute = { url: `${api}/user`, headers: { Authorization: `token ${personal}` } };
    const appUserRoute = { url: `${api}/user`, headers: { Authorization: `token ${oauth}` } };
    const checkRoute = {
      url: `${api}/applications/${clientId}/tokens/${oauth}`,
      headers: { Authorization: basicAuth(clientId, clientSecret) },
    };
    floor = await startFloorServer(stack.dynamodbEndpoint, stack.tableName);
    const floorRoute = { url: floor.url, headers: { Authorization: `token ${personal}` } };
    const answer = await answerOf(userRoute);
    answerFloor = await startAnswerFloor(stack.dynamodbEndpoint, stack.tableName, answer);
    gatewayFloor = await startGatewayFloor(stack.dynamodbEndpoint, stack.tableName, answer);
    const answerFloorRoute = { url: answerFloor.url, headers: userRoute.headers };
    const gatewayFloorRoute = { url: gatewayFloor.url, headers: userRoute.headers };

    const countCalls = async (client: DynamoDBDocumentClient, route: Target): Promise<CallProfile> => {
      const counter = countDynamoDbCalls(
        client,
        (command, input): CallRecord => ({ command, item: describeCall(command, input as CommandInput) }),
      );
      try {
        return await callsPerRequest(counter, route, options.countedRequests);
      } finally {
        counter.remove();
      }
    };
    const userCalls = await countCalls(db(), userRoute);
    const appUserCalls = await countCalls(db(), appUserRoute);
    const checkCalls = await countCalls(db(), checkRoute);
    const floorCalls = await countCalls(floor.client, floorRoute);
    const answerFloorCalls = await countCalls(answerFloor.client, answerFloorRoute);
    const gatewayFloorCalls = await countCalls(gatewayFloor.client, gatewayFloorRoute);

    const targets = [floorRoute, userRoute, appUserRoute, checkRoute, answerFloorRoute, gatewayFloorRoute];
    const measure = (target: Target, warmupMs: number, durationMs: number) =>
      runLoad({ ...target, concurrency: options.concurrency, warmupMs, durationMs, expectStatus: 200 });
    for (const target of targets) await measure(target, 0, options.prewarmMs);
    const runs: LoadResult[][] = targets.map(() => []);
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < targets.length; k++) {
        const index = (round + k) % targets.length;
        const target = targets[index] as Target;
        runs[index]?.push(await measure(target, options.warmupMs, options.durationMs));
      }
    }
    const [
      floorRuns = [],
      userRuns = [],
      appUserRuns = [],
      checkRuns = [],
      answerFloorRuns = [],
      gatewayFloorRuns = [],
    ] = runs;
    return {
      options,
      loadAverage,
      user: { label: '`GET /api/v3/user` (personal token)', runs: userRuns, calls: userCalls },
      appUser: { label: '`GET /api/v3/user` (OAuth app token)', runs: appUserRuns, calls: appUserCalls },
      check: {
        label: '`GET /api/v3/applications/{client_id}/tokens/{access_token}` (app Basic)',
        runs: checkRuns,
        calls: checkCalls,
      },
      floor: { label: 'floor: bare `node:http` + one GetItem', runs: floorRuns, calls: floorCalls },
      answerFloor: {
        label: "floor answering `GET /api/v3/user`'s headers and body",
        runs: answerFloorRuns,
        calls: answerFloorCalls,
      },
      gatewayFloor: {
        label: 'that floor as a bare handler behind the local API Gateway',
        runs: gatewayFloorRuns,
        calls: gatewayFloorCalls,
      },
      answer: {
        headers: Object.keys(answer.headers).length + 1,
        bodyBytes: Buffer.byteLength(JSON.stringify(answer.body)),
      },
    };
  } finally {
    await gatewayFloor?.stop();
    await answerFloor?.stop();
    await floor?.stop();
    await stop();
  }
}

/** `2 — GetItem ×2: TOKEN/TOKEN strong, USER/PROFILE`. */
export const callsText = (calls: CallCount): string => {
  const commands = [...calls.byCommand].map(([command, n]) => `${command} ×${n}`).join(', ');
  const items = [...calls.byItem].map(([item, n]) => `${item.replace(/^\w+ /, '')}${n > 1 ? ` ×${n}` : ''}`);
  return `${calls.total} — ${commands}: ${items.join(', ')}`;
};

/** Requests whose calls differed from the usual ones, one line per route that had any. */
const unusualCalls = (routes: readonly RouteResult[]): string[] =>
  routes.flatMap((r) =>
    r.calls.unusual.map(
      ({ request, calls }) =>
        `- ${r.label}: request ${request} of ${r.calls.requests} made ${calls.total} calls instead: ${callsText(calls).replace(/^\d+ — /, '')}`,
    ),
  );

const rpsOf = (route: RouteResult): number[] => route.runs.map((r) => r.rps);
const pooled = (route: RouteResult, p: number): number =>
  percentile(
    route.runs.flatMap((r) => r.latencies),
    p,
  );
/** The route's throughput as a share of the floor's, per round (same conditions), then the median. */
export const shareOfFloor = (route: RouteResult, floor: RouteResult): number =>
  median(route.runs.map((r, round) => (100 * r.rps) / (floor.runs[round]?.rps ?? Number.NaN)));

/**
 * What the personal token's gap to the floor is made of, from the two floors between them: the
 * size of GitHub's answer, the local API Gateway, and the rest, which is the service's own work.
 */
function gapLine(result: TokenBenchResult): string {
  const { user, floor, answerFloor, gatewayFloor, answer } = result;
  const points = (from: number, to: number) => (from - to).toFixed(0);
  const answered = shareOfFloor(answerFloor, floor);
  const behindGateway = shareOfFloor(gatewayFloor, floor);
  const service = shareOfFloor(user, floor);
  return (
    `- What the personal token's gap of ${points(100, service)} points is made of (the two floors between, measured in the same rounds): ` +
    `answering GitHub's ${answer.headers} headers and ${answer.bodyBytes}-byte user instead of the floor's two fields, ${points(100, answered)}; ` +
    `the local API Gateway (the proxy event, the zip function's runtime, the payload and time limits, the result written back), ${points(answered, behindGateway)}; ` +
    `the service's own work (the middy stack, authentication, the user's JSON, logging), ${points(behindGateway, service)}. ` +
    "In AWS the gateway's share is API Gateway's and the Lambda runtime's work, not the function's."
  );
}

/** The section's markdown: the table, the target on round trips and the target on throughput. */
export function tokensReport(result: TokenBenchResult, machine: string): string {
  const { options, user, appUser, check, floor, answerFloor, gatewayFloor } = result;
  const rows = [user, appUser, check, floor, answerFloor, gatewayFloor].map((r) => {
    const rps = rpsOf(r);
    const spread = `${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)}`;
    return `| ${r.label} | ${median(rps).toFixed(0)} (${spread}) | ${ms(pooled(r, 50))} | ${ms(pooled(r, 99))} | ${callsText(r.calls.usual)} |`;
  });
  // Issue 19: every token-authenticated request is one DynamoDB round trip, whatever the token
  // kind, and within these shares of the floor's throughput.
  const targets: readonly (readonly [RouteResult, string, number])[] = [
    [user, 'personal token', 90],
    [appUser, 'OAuth app token', 85],
    [check, 'app-side check', 90],
  ];
  const roundTrips = targets.map(
    ([r, kind]) => `${kind} ${r.calls.usual.total}${r.calls.usual.total === 1 ? '' : ' (not met)'}`,
  );
  const roundTripsMet = targets.every(([r]) => r.calls.usual.total === 1);
  const throughput = targets.map(([r, , target]) => {
    const share = shareOfFloor(r, floor);
    return `- ${r.label}: throughput vs floor: ${share.toFixed(0)}% (target at least ${target}%: ${share >= target ? 'met' : 'not met'})`;
  });
  return [
    `Measured ${machine}: the local stack started in the bench process (\`startLocalStack\`, its own in-memory DynamoDB Local, real handlers) ` +
      `and a closed loop of ${options.concurrency} keep-alive connections on 127.0.0.1 (\`lib/bench/load.ts\`). ` +
      `After ${options.prewarmMs / 1000} s of unmeasured load per target, ${options.rounds} rounds of one run per target in rotating order, ` +
      `each run ${options.warmupMs / 1000} s warm-up then ${options.durationMs / 1000} s measured. ` +
      'RPS: median of the runs (min–max); p50/p99: over every measured request; throughput vs floor: median of the per-round ratios. ' +
      'The load loop, the HTTP server, the handlers and the floor share one Node process, and DynamoDB Local (a JVM) the same cores; ' +
      `the 1-minute load average was ${result.loadAverage.toFixed(1)} before the bench started (anything else running skews it). ` +
      `DynamoDB calls: a middleware on the client's stack (step \`initialize\`, one per SDK call) over ${options.countedRequests} sequential requests per target, before the load runs; the table shows what most requests made.`,
    '',
    '| Route | RPS | p50 | p99 | DynamoDB calls/request |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    ...unusualCalls([user, appUser, check, floor, answerFloor, gatewayFloor]),
    `- DynamoDB round trips per request, steady state (target 1 for every token kind): ${roundTrips.join(', ')}: ${roundTripsMet ? 'met' : 'not met'}. ` +
      'The token is always read strongly consistently: a personal token by a GetItem of `TOKEN#<hash>`; an OAuth app token by one BatchGetItem with `APPSTATE#<tag>`, ' +
      "its application's suspension state named by the tag the token carries, so that suspension takes effect on the next request; the check endpoint by one BatchGetItem with the application. " +
      'The first request of each hour per token also records "last used" (one TransactWriteItems), as listed above.',
    ...throughput,
    gapLine(result),
  ].join('\n');
}
