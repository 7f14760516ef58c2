import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { GetExecutionHistoryCommand, SFNClient } from '@aws-sdk/client-sfn';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '#local/stack';
import { config, ENV } from '#shared/config';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const COUNTER_MIDDLEWARE = 'benchCountDynamoDbCalls';

/** The real admin CLI against an in-process stack's endpoints file; returns its JSON. */
export async function admin(endpointsFile: string, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(TSX, ['bin/admin.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOCAL_ENDPOINTS_FILE: endpointsFile },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

export const basicAuth = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * Records every `send` on a DocumentClient (for the service, the process's one `db()`, which the
 * in-process handlers use) at the 'initialize' step: once per SDK call, before SDK retries. Each
 * call is recorded as `describe(command, input)` returns it.
 */
export function countDynamoDbCalls<R>(
  client: DynamoDBDocumentClient,
  describe: (command: string, input: Record<string, unknown>) => R,
): { take(): R[]; remove(): void } {
  let records: R[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      records.push(describe(command, args.input as Record<string, unknown>));
      return next(args);
    },
    { step: 'initialize', name: COUNTER_MIDDLEWARE },
  );
  return {
    take: () => {
      const taken = records;
      records = [];
      return taken;
    },
    remove: () => void client.middlewareStack.remove(COUNTER_MIDDLEWARE),
  };
}

export const BENCH_PASSWORD = 'bench-password-1';

/**
 * The accounts every benchmark needs, made with the real admin CLI: a user `bench`, and an OAuth
 * application owned by `bench-owner` with the given callback.
 */
export async function createBenchAccounts(
  endpointsFile: string,
  callbackUrl: string,
): Promise<{ clientId: string; clientSecret: string; name: string }> {
  await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
  await admin(endpointsFile, 'user', 'create', 'bench-owner', '--password', BENCH_PASSWORD);
  const app = await admin(
    endpointsFile,
    'app',
    'create',
    '--owner',
    'bench-owner',
    '--name',
    'Bench App',
    '--url',
    'https://bench.example',
    '--callback-url',
    callbackUrl,
  );
  return { clientId: String(app.client_id), clientSecret: String(app.client_secret), name: String(app.name) };
}

/**
 * The local stack in this process with a fresh table and its own endpoints file, for one
 * benchmark section; `stop` ends it and restores the environment.
 */
export async function startBenchStack(
  name: string,
  options: Pick<LocalStackOptions, 'importStateMachine'> = {},
): Promise<{ stack: LocalStack; endpointsFile: string; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `bench-${name}-`));
  const endpointsFile = join(dir, 'local.json');
  const previousEndpointsFile = process.env.LOCAL_ENDPOINTS_FILE;
  process.env.LOCAL_ENDPOINTS_FILE = endpointsFile;
  process.env[ENV.logLevel] ??= 'silent';
  const tableName = `bench-${randomUUID()}`;
  const stack = await startLocalStack({ port: 0, tableName, writeEndpointsFile: true, ...options });
  const stop = async () => {
    await stack.stop();
    if (previousEndpointsFile === undefined) delete process.env.LOCAL_ENDPOINTS_FILE;
    else process.env.LOCAL_ENDPOINTS_FILE = previousEndpointsFile;
    await rm(dir, { recursive: true, force: true });
  };
  // db() is built from config() on first use: it must be this stack's, never a real table.
  if (config().tableName !== tableName || config().dynamodbEndpoint !== stack.dynamodbEndpoint) {
    await stop();
    throw new Error('the data layer is configured for another table than the bench stack');
  }
  return { stack, endpointsFile, stop };
}

/** An import execution's history: each event's type, time and the state it enters or exits. */
export async function executionHistory(
  stepFunctionsEndpoint: string,
  execution: string,
): Promise<{ type: string; at: number; state?: string }[]> {
  const sfn = new SFNClient({
    endpoint: stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const executionArn = `arn:aws:states:us-east-1:123456789012:execution:SourceImport:${execution}`;
  const events: { type: string; at: number; state?: string }[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(
      new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken }),
    );
    for (const event of page.events ?? []) {
      const state = event.stateEnteredEventDetails?.name ?? event.stateExitedEventDetails?.name;
      events.push({
        type: event.type ?? '',
        at: event.timestamp?.getTime() ?? 0,
        ...(state === undefined ? {} : { state }),
      });
    }
    nextToken = page.nextToken;
  } while (nextToken);
  return events;
}

/** How long an import execution spent in each state it entered (entered → next state), in order. */
export async function stateDurations(
  stepFunctionsEndpoint: string,
  execution: string,
): Promise<{ name: string; ms: number }[]> {
  const events = await executionHistory(stepFunctionsEndpoint, execution);
  const end = Math.max(0, ...events.map((event) => event.at));
  const entered = events.filter((event) => event.type.endsWith('StateEntered') && event.state !== undefined);
  return entered.map((event, i) => ({
    name: event.state ?? '',
    ms: (entered[i + 1]?.at ?? end) - event.at,
  }));
}

/** `stateDurations` summed by state (a state entered again, a chunk loop's, counts once with all its time). */
export async function stateTotals(
  stepFunctionsEndpoint: string,
  execution: string,
): Promise<Record<string, number>> {
  const times: Record<string, number> = {};
  for (const { name, ms } of await stateDurations(stepFunctionsEndpoint, execution))
    times[name] = (times[name] ?? 0) + ms;
  return times;
}

/** A smart-HTTP Git origin in a process of its own (`git-origin-process.ts`). */
export async function serveGitHttpApart(
  root: string,
): Promise<{ readonly url: string; close(): Promise<void> }> {
  const child = spawn(TSX, [fileURLToPath(new URL('./git-origin-process.ts', import.meta.url)), root], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const line = seen.split('\n')[0];
      if (seen.includes('\n') && line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`the origin process exited with ${code}`)));
  });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
