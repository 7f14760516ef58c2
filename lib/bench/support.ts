import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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
