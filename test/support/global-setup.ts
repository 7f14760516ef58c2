import type { TestProject } from 'vitest/node';
import { type DynamoDbLocal, startDynamoDbLocal } from '#local/dynamodb-local';

/**
 * Starts one in-memory DynamoDB Local for the whole run and provides its endpoint as
 * `dynamodbEndpoint`. Vitest runs a global setup once per project that lists it (integration and
 * e2e both do), and imports the file separately for each, so the instance is shared through
 * `globalThis` with a reference count: the first project starts it, the last teardown stops it.
 */
interface Shared {
  emulator: Promise<DynamoDbLocal>;
  users: number;
}

const KEY = Symbol.for('oauth-import-service.dynamodb-local');
const registry = globalThis as { [KEY]?: Shared };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let shared = registry[KEY];
  if (!shared) {
    shared = { emulator: startDynamoDbLocal({}), users: 0 };
    registry[KEY] = shared;
  }
  shared.users += 1;
  const current = shared;

  let emulator: DynamoDbLocal;
  try {
    emulator = await current.emulator;
  } catch (error) {
    current.users -= 1;
    if (registry[KEY] === current) delete registry[KEY];
    throw error;
  }
  project.provide('dynamodbEndpoint', emulator.endpoint);

  return async () => {
    current.users -= 1;
    if (current.users > 0) return;
    if (registry[KEY] === current) delete registry[KEY];
    await emulator.stop();
  };
}
