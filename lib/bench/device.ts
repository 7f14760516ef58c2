import { loadavg } from 'node:os';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '#data/client';
import { deviceCodeKey } from '#data/keys';
import { DEVICE_CODE_GRANT, hashDeviceSecret } from '#domain/device-codes';
import { ENV } from '#shared/config';
import { bodyOf, startFloor } from './floor.ts';
import { type LoadResult, runLoad } from './load.ts';
import { median, ms, percentile } from './measure.ts';
import { admin, countDynamoDbCalls, createBenchAccounts, startBenchStack } from './support.ts';

export interface DeviceBenchOptions {
  readonly concurrency: number;
  /** Device codes polled in rotation (each one stays on time: see `measureDevicePolls`). */
  readonly codes: number;
  readonly prewarmMs: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly rounds: number;
  readonly countedPolls: number;
}

export interface DeviceBenchResult {
  readonly options: DeviceBenchOptions;
  readonly loadAverage: number;
  readonly poll: readonly LoadResult[];
  readonly floor: readonly LoadResult[];
  /** DynamoDB calls of one pending poll, e.g. `GetItem DEVICE/DEVICE`, and of one floor request. */
  readonly pollCalls: readonly string[];
  readonly floorCalls: readonly string[];
  /** Every counted poll answered `authorization_pending` (the hot path, not `slow_down`). */
  readonly allPending: boolean;
}

/** The poll's form body for one device code. */
const pollBody = (clientId: string, deviceCode: string): string =>
  new URLSearchParams({
    client_id: clientId,
    device_code: deviceCode,
    grant_type: DEVICE_CODE_GRANT,
  }).toString();

/**
 * The floor: a bare `node:http` server that reads the form, does the one strongly consistent
 * GetItem of the device code's item any poll needs at least, and answers `authorization_pending`.
 */
const startFloorServer = (dynamodbEndpoint: string, tableName: string) =>
  startFloor(dynamodbEndpoint, '/login/oauth/access_token', async (client, request) => {
    const form = new URLSearchParams(await bodyOf(request));
    const deviceCodeHash = hashDeviceSecret(form.get('device_code') ?? '');
    const { Item } = await client.send(
      new GetCommand({ TableName: tableName, Key: deviceCodeKey(deviceCodeHash), ConsistentRead: true }),
    );
    return { body: Item ? { error: 'authorization_pending' } : { error: 'incorrect_device_code' } };
  });

const describeCall = (command: string, input: Record<string, unknown>): string => {
  const key = input.Key as { PK?: unknown; SK?: unknown } | undefined;
  const entity = (value: unknown) => String(value ?? '?').split('#')[0];
  return key ? `${command} ${entity(key.PK)}/${entity(key.SK)}` : command;
};

/**
 * Polls per second of the token endpoint's device grant on pending device codes, next to the
 * one-GetItem floor, under the same closed loop. The stack runs with a 1 ms polling interval
 * (`DEVICE_POLL_INTERVAL_SECONDS`) and the load rotates through `codes` device codes, so every
 * poll is on time and takes the pending path, never `slow_down`.
 */
export async function measureDevicePolls(options: DeviceBenchOptions): Promise<DeviceBenchResult> {
  const loadAverage = loadavg()[0] ?? Number.NaN;
  process.env[ENV.devicePollIntervalSeconds] = '0.001';
  const { stack, endpointsFile, stop } = await startBenchStack('device');
  let floor: Awaited<ReturnType<typeof startFloorServer>> | undefined;
  try {
    const origin = `http://127.0.0.1:${new URL(stack.baseUrl).port}`;
    const { clientId } = await createBenchAccounts(endpointsFile, 'https://bench.example/callback');
    await admin(endpointsFile, 'app', 'device-flow', 'enable', clientId);
    const deviceCodes: string[] = [];
    for (let i = 0; i < options.codes; i++) {
      const response = await fetch(`${origin}/login/device/code`, {
        method: 'POST',
        headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: clientId, scope: 'repo' }),
      });
      const body = (await response.json()) as { device_code?: string; error?: string };
      if (!body.device_code) throw new Error(`no device code: ${JSON.stringify(body)}`);
      deviceCodes.push(body.device_code);
    }
    let next = 0;
    const rotating = () => pollBody(clientId, deviceCodes[next++ % deviceCodes.length] ?? '');
    floor = await startFloorServer(stack.dynamodbEndpoint, stack.tableName);
    const headers = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' };
    const pollUrl = `${origin}/login/oauth/access_token`;

    const countCalls = async (client: DynamoDBDocumentClient, url: string) => {
      const counter = countDynamoDbCalls(client, describeCall);
      const answers: string[] = [];
      let calls: string[] = [];
      try {
        for (let i = 0; i < options.countedPolls; i++) {
          counter.take();
          const response = await fetch(url, { method: 'POST', headers, body: rotating() });
          answers.push(String(((await response.json()) as { error?: string }).error));
          calls = counter.take();
        }
      } finally {
        counter.remove();
      }
      return { calls, allPending: answers.every((answer) => answer === 'authorization_pending') };
    };
    const pollCalls = await countCalls(db(), pollUrl);
    const floorCalls = await countCalls(floor.client, floor.url);
    const targets = [floor.url, pollUrl];
    const measure = (url: string, warmupMs: number, durationMs: number) =>
      runLoad({
        url,
        headers,
        body: rotating,
        concurrency: options.concurrency,
        warmupMs,
        durationMs,
        expectStatus: 200,
      });
    for (const url of targets) await measure(url, 0, options.prewarmMs);
    const runs: LoadResult[][] = targets.map(() => []);
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < targets.length; k++) {
        const index = (round + k) % targets.length;
        runs[index]?.push(await measure(targets[index] ?? '', options.warmupMs, options.durationMs));
      }
    }
    // Still pending after the load: the loop measured the pending path, not slow_down.
    const after = await countCalls(db(), pollUrl);
    const [floorRuns = [], pollRuns = []] = runs;
    return {
      options,
      loadAverage,
      poll: pollRuns,
      floor: floorRuns,
      pollCalls: pollCalls.calls,
      floorCalls: floorCalls.calls,
      allPending: pollCalls.allPending && after.allPending,
    };
  } finally {
    await floor?.stop();
    await stop();
    delete process.env[ENV.devicePollIntervalSeconds];
  }
}

export function deviceReport(result: DeviceBenchResult, machine: string): string {
  const { options } = result;
  const row = (label: string, runs: readonly LoadResult[], calls: readonly string[]) => {
    const rps = runs.map((r) => r.rps);
    const latencies = runs.flatMap((r) => r.latencies);
    return `| ${label} | ${median(rps).toFixed(0)} (${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)}) | ${ms(percentile(latencies, 50))} | ${ms(percentile(latencies, 99))} | ${calls.length} — ${calls.join(', ')} |`;
  };
  const share = median(result.poll.map((r, round) => r.rps / (result.floor[round]?.rps ?? Number.NaN)));
  return [
    `Measured ${machine}: the local stack in the bench process (its own in-memory DynamoDB Local, real handlers), a closed loop of ${options.concurrency} keep-alive connections ` +
      `POSTing \`grant_type=${DEVICE_CODE_GRANT}\` polls that rotate through ${options.codes} pending device codes; the stack's polling interval is 1 ms ` +
      '(`DEVICE_POLL_INTERVAL_SECONDS=0.001`) so that every poll is on time and answers `authorization_pending` (the hot path; checked before and after the load). ' +
      `After ${options.prewarmMs / 1000} s of unmeasured load per target, ${options.rounds} rounds of one run per target in rotating order, each ${options.warmupMs / 1000} s warm-up then ${options.durationMs / 1000} s measured. ` +
      `The 1-minute load average was ${result.loadAverage.toFixed(1)} before the bench started.`,
    '',
    '| Target | Polls/s | p50 | p99 | DynamoDB calls/poll |',
    '|---|---|---|---|---|',
    row('`POST /login/oauth/access_token` (device grant, pending)', result.poll, result.pollCalls),
    row(
      'floor: bare `node:http`, form parse + one strongly consistent GetItem',
      result.floor,
      result.floorCalls,
    ),
    '',
    `- Every measured poll took the pending path: ${result.allPending ? 'yes' : 'NO'}.`,
    `- Polls per second vs floor: ${(100 * share).toFixed(0)}% (target at least 80%: ${share >= 0.8 ? 'met' : 'not met'}).`,
  ].join('\n');
}
