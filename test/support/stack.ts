import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '#local/stack';
import { ENV } from '#shared/config';

/**
 * The whole local service for one test file: the run's DynamoDB Local (from the global setup) with
 * a table of the file's own, the Step Functions endpoint and the HTTP server on a free port.
 */
export async function startTestStack(
  options: Pick<
    LocalStackOptions,
    | 'importStateMachine'
    | 'gatewayLimits'
    | 'gitFrontend'
    | 'syncScheduler'
    | 'webhookRetryDelaysMs'
    | 'dynamodbEndpoint'
  > = {},
): Promise<LocalStack & { endpointsFile: string }> {
  const endpointsFile = join(await mkdtemp(join(tmpdir(), 'stack-')), 'local.json');
  process.env.LOCAL_ENDPOINTS_FILE = endpointsFile;
  process.env[ENV.logLevel] ??= 'silent';
  const stack = await startLocalStack({
    port: 0,
    dynamodbEndpoint: inject('dynamodbEndpoint'),
    tableName: `test-${randomUUID()}`,
    writeEndpointsFile: true,
    ...options,
  });
  return { ...stack, endpointsFile };
}

export const basicAuth = (login: string, password: string): string =>
  `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

/** Response bodies in tests are read loosely; the assertions say what shape they must have. */
// biome-ignore lint/suspicious/noExplicitAny: test bodies are asserted field by field
export const json = async (response: Response): Promise<any> => response.json();
