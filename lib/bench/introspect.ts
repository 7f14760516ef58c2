import { loadavg } from 'node:os';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { db } from '#data/client';
import { type LoadResult, runLoad } from './load.ts';
import { median, ms, percentile } from './measure.ts';
import {
  BENCH_PASSWORD,
  basicAuth,
  countDynamoDbCalls,
  createBenchAccounts,
  startBenchStack,
} from './support.ts';
import {
  type CallProfile,
  type CallRecord,
  type CommandInput,
  callsPerRequest,
  callsText,
  createToken,
  describeCall,
  type RouteResult,
  shareOfFloor,
  startFloorServer,
  type Target,
  type TokenBenchOptions,
} from './tokens.ts';

export interface IntrospectBenchResult {
  readonly options: TokenBenchOptions;
  readonly loadAverage: number;
  /** `POST /login/oauth/introspect` of the client's own token (active). */
  readonly introspect: RouteResult;
  /** The same for a token that is not the client's (inactive): the path a probing client takes. */
  readonly inactive: RouteResult;
  readonly floor: RouteResult;
}

/**
 * Introspections per second on the local stack started in this process, next to the one-GetItem
 * floor of `tokens.ts`, under the same load loop and rotation: the introspection reads the client
 * and the token in one strongly consistent BatchGetItem and does nothing else.
 */
export async function measureIntrospect(options: TokenBenchOptions): Promise<IntrospectBenchResult> {
  const loadAverage = loadavg()[0] ?? Number.NaN;
  const { stack, endpointsFile, stop } = await startBenchStack('introspect');
  let floor: Awaited<ReturnType<typeof startFloorServer>> | undefined;
  try {
    const origin = `http://127.0.0.1:${new URL(stack.baseUrl).port}`;
    const api = `${origin}/api/v3`;
    const { clientId, clientSecret } = await createBenchAccounts(
      endpointsFile,
      'https://bench.example/callback',
    );
    const basic = basicAuth('bench', BENCH_PASSWORD);
    const personal = await createToken(api, basic, { note: 'bench personal', scopes: ['user'] });
    const oauth = await createToken(api, basic, {
      note: 'bench app',
      client_id: clientId,
      client_secret: clientSecret,
      scopes: ['repo', 'user'],
    });
    const introspectionOf = (token: string): Target => {
      const body = new URLSearchParams({ token }).toString();
      return {
        url: `${origin}/login/oauth/introspect`,
        method: 'POST',
        body,
        headers: {
          Authorization: basicAuth(clientId, clientSecret),
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': String(Buffer.byteLength(body)),
        },
      };
    };
    const activeRoute = introspectionOf(oauth);
    // A personal access token is inactive to every client: the same reads, the other answer.
    const inactiveRoute = introspectionOf(personal);
    const check = await fetch(activeRoute.url, activeRoute);
    const answer = (await check.json()) as { active?: boolean };
    if (answer.active !== true)
      throw new Error(`introspection did not say active: ${JSON.stringify(answer)}`);

    floor = await startFloorServer(stack.dynamodbEndpoint, stack.tableName);
    const floorRoute: Target = { url: floor.url, headers: { Authorization: `token ${personal}` } };

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
    const activeCalls = await countCalls(db(), activeRoute);
    const inactiveCalls = await countCalls(db(), inactiveRoute);
    const floorCalls = await countCalls(floor.client, floorRoute);

    const targets = [floorRoute, activeRoute, inactiveRoute];
    const measure = (target: Target, warmupMs: number, durationMs: number) =>
      runLoad({ ...target, concurrency: options.concurrency, warmupMs, durationMs, expectStatus: 200 });
    for (const target of targets) await measure(target, 0, options.prewarmMs);
    const runs: LoadResult[][] = targets.map(() => []);
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < targets.length; k++) {
        const index = (round + k) % targets.length;
        runs[index]?.push(await measure(targets[index] as Target, options.warmupMs, options.durationMs));
      }
    }
    const [floorRuns = [], activeRuns = [], inactiveRuns = []] = runs;
    return {
      options,
      loadAverage,
      introspect: {
        label: '`POST /login/oauth/introspect` (own token: active)',
        runs: activeRuns,
        calls: activeCalls,
      },
      inactive: {
        label: '`POST /login/oauth/introspect` (personal token: inactive)',
        runs: inactiveRuns,
        calls: inactiveCalls,
      },
      floor: { label: 'floor: bare `node:http` + one GetItem', runs: floorRuns, calls: floorCalls },
    };
  } finally {
    await floor?.stop();
    await stop();
  }
}

/** The section's markdown: the table and the target (at least 0.8× the floor's throughput). */
export function introspectReport(result: IntrospectBenchResult, machine: string): string {
  const { options, introspect, inactive, floor } = result;
  const rows = [introspect, inactive, floor].map((r) => {
    const rps = r.runs.map((run) => run.rps);
    const latencies = r.runs.flatMap((run) => run.latencies);
    return `| ${r.label} | ${median(rps).toFixed(0)} (${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)}) | ${ms(percentile(latencies, 50))} | ${ms(percentile(latencies, 99))} | ${callsText(r.calls.usual)} |`;
  });
  const shares = [introspect, inactive].map((r) => {
    const share = shareOfFloor(r, floor) / 100;
    return `- ${r.label}: ${share.toFixed(2)}× the floor (target at least 0.8×: ${share >= 0.8 ? 'met' : 'not met'})`;
  });
  return [
    `Measured ${machine}: the local stack started in the bench process, a closed loop of ${options.concurrency} keep-alive connections on 127.0.0.1, ` +
      `${options.prewarmMs / 1000} s of unmeasured load per target, then ${options.rounds} rounds of one run per target in rotating order ` +
      `(${options.warmupMs / 1000} s warm-up, ${options.durationMs / 1000} s measured), as in the token section. ` +
      'Each introspection is a form POST with the client id and secret in HTTP Basic. ' +
      `The 1-minute load average was ${result.loadAverage.toFixed(1)} before the bench started.`,
    '',
    '| Route | RPS | p50 | p99 | DynamoDB calls/request |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    ...shares,
  ].join('\n');
}
