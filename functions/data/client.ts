import { setTimeout as sleep } from 'node:timers/promises';
import { type AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { awsClientSettings } from '#shared/aws-clients';
import { config } from '#shared/config';
import type { Key } from './keys.ts';
import { survivesThrottling } from './throttling.ts';
import { untilProcessed } from './unprocessed.ts';

let documentClient: DynamoDBDocumentClient | undefined;

/**
 * The one DocumentClient of the process, built on first use so that entry points (the admin CLI,
 * the local stack) can set the environment before any data module touches it.
 */
export function db(): DynamoDBDocumentClient {
  if (!documentClient) {
    documentClient = documentClientOf(new DynamoDBClient(awsClientSettings(config().dynamodbEndpoint)));
  }
  return documentClient;
}

/**
 * The DocumentClient over `client` as the service uses it: undefined attributes dropped, and
 * without the SDK's logger middleware. That middleware hands every call's input and output to the
 * client's logger, a no-op here (the service logs what it decides, never a call's items); yet it
 * first walks both through their schemas to mask sensitive members, on every call, before the
 * no-op drops them. The benchmark floors build theirs here too, so that they pay what the
 * service's calls pay (docs/decisions.md, issue 19).
 */
export function documentClientOf(client: DynamoDBClient): DynamoDBDocumentClient {
  client.middlewareStack.remove('loggerMiddleware');
  survivesThrottling(client);
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

export function tableName(): string {
  return config().tableName;
}

/** True when DynamoDB refused a write because its condition (or one in a transaction) did not hold. */
export function isConditionFailure(error: unknown): boolean {
  const { name, CancellationReasons: reasons } = (error ?? {}) as {
    name?: string;
    CancellationReasons?: Array<{ Code?: string }>;
  };
  if (name === 'ConditionalCheckFailedException') return true;
  return (
    name === 'TransactionCanceledException' &&
    (reasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed')
  );
}

/**
 * Awaits a conditional write: its result, or `false` when its condition (or one in its
 * transaction) did not hold. Every other failure is thrown.
 */
export async function conditionalWrite<T>(write: Promise<T>): Promise<T | false> {
  try {
    return await write;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Timestamps as GitHub writes them: ISO 8601 UTC without fractional seconds. */
export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Several items in one BatchGetItem round trip (100 keys at most), strongly consistent when asked,
 * re-sending whatever DynamoDB leaves unprocessed, with backoff (`untilProcessed`). Returns the found items by `PK|SK`.
 */
export async function getItems(
  keys: readonly Key[],
  consistent: boolean,
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  const batch: Record<string, unknown>[] = keys.map((key) => ({ PK: key.PK, SK: key.SK }));
  await untilProcessed('BatchGetItem', batch, async (pending) => {
    const result: BatchGetCommandOutput = await db().send(
      new BatchGetCommand({
        RequestItems: { [tableName()]: { Keys: [...pending], ConsistentRead: consistent } },
      }),
    );
    for (const item of result.Responses?.[tableName()] ?? []) found.set(`${item.PK}|${item.SK}`, item);
    return result.UnprocessedKeys?.[tableName()]?.Keys;
  });
  return found;
}

/** Any number of items: `getItems` calls of 100 keys each, side by side (one round trip's time). */
export async function getItemsInBatches(
  keys: readonly Key[],
  consistent: boolean,
): Promise<Map<string, Record<string, unknown>>> {
  const slices: Key[][] = [];
  for (let i = 0; i < keys.length; i += 100) slices.push(keys.slice(i, i + 100));
  const found = await Promise.all(slices.map((slice) => getItems(slice, consistent)));
  return new Map(found.flatMap((items) => [...items]));
}

/** BatchWriteItem calls in flight at once: a few, far below any table's write capacity. */
const BATCH_WRITES_IN_FLIGHT = 4;

/**
 * Puts and deletes (`{ PutRequest }`, `{ DeleteRequest }`) in BatchWriteItem calls of 25, up to
 * `BATCH_WRITES_IN_FLIGHT` side by side (each a round trip: an import's revision map of a few
 * thousand entries is some 80 items), each call repeated with whatever DynamoDB leaves
 * unprocessed until nothing is, with backoff (`untilProcessed`). The items are independent: their order of writing is not a contract.
 */
export async function batchWrite(requests: readonly Record<string, unknown>[]): Promise<void> {
  const slices: Record<string, unknown>[][] = [];
  for (let i = 0; i < requests.length; i += 25) slices.push(requests.slice(i, i + 25));
  const writeSlices = async () => {
    for (let slice = slices.shift(); slice; slice = slices.shift()) {
      await untilProcessed('BatchWriteItem', slice, async (pending) => {
        const result = await db().send(
          new BatchWriteCommand({ RequestItems: { [tableName()]: [...pending] } }),
        );
        return result.UnprocessedItems?.[tableName()] as Record<string, unknown>[] | undefined;
      });
    }
  };
  const writers = Array.from({ length: Math.min(BATCH_WRITES_IN_FLIGHT, slices.length) }, writeSlices);
  // Every writer ends before a failure is reported: none is left writing behind the caller.
  const outcomes = await Promise.allSettled(writers);
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

export const itemOf = (
  items: ReadonlyMap<string, Record<string, unknown>>,
  key: Key,
): Record<string, unknown> | undefined => items.get(`${key.PK}|${key.SK}`);

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * How a transaction ended: written; cancelled by a concurrent transaction (`conflict`, worth
 * retrying from a fresh read); or refused because the condition of item `failedIndex` failed
 * (which uniqueness rule, or which expectation about the state read, did not hold).
 */
export type Outcome =
  | 'ok'
  | 'conflict'
  | {
      /** The first item whose condition failed. */
      readonly failedIndex: number;
      /** Every item whose condition failed. */
      readonly failed: readonly number[];
      /**
       * The items as they were, for the actions sent with `ReturnValuesOnConditionCheckFailure:
       * 'ALL_OLD'` whose condition failed (by action index), so the caller can decide again
       * without reading them.
       */
      readonly items: ReadonlyMap<number, Record<string, unknown>>;
    };

/** Cancellation reasons that say nothing is wrong with the request itself. */
const RETRYABLE_REASONS = new Set([
  'None',
  'ConditionalCheckFailed',
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

export async function transact(items: TransactItem[]): Promise<Outcome> {
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items }));
    return 'ok';
  } catch (error) {
    const { name, CancellationReasons: reasons } = error as {
      name?: string;
      CancellationReasons?: Array<{ Code?: string; Item?: Record<string, AttributeValue> }>;
    };
    if (name !== 'TransactionCanceledException' || !reasons) throw error;
    // An invalid request (an over-long key, an item too large) fails the same way every time:
    // never retried as if it were contention.
    if (reasons.some((reason) => !RETRYABLE_REASONS.has(reason.Code ?? 'None'))) throw error;
    const failed = reasons.flatMap((reason, index) =>
      reason.Code === 'ConditionalCheckFailed' ? [index] : [],
    );
    if (failed.length === 0) return 'conflict';
    const items = new Map<number, Record<string, unknown>>();
    for (const index of failed) {
      const item = reasons[index]?.Item;
      if (item) items.set(index, unmarshall(item));
    }
    return { failedIndex: failed[0] as number, failed, items };
  }
}

/** Attempts for an optimistic read-then-transact loop before giving up. */
const MAX_ATTEMPTS = 25;

/**
 * Waits before attempt `attempt + 1` of such a loop: full-jitter exponential backoff capped at
 * 200 ms (about 2.5 s over all attempts at most on average), so that writers contending for the
 * same items (a grant's counter, the oldest token, a key's pointer) spread out instead of
 * colliding again at once.
 */
export const backoff = (attempt: number): Promise<void> =>
  sleep(Math.random() * Math.min(200, 5 * 2 ** attempt));

/** What an attempt of `retryOnConflict` returns when a concurrent transaction got in its way. */
export const RETRY: unique symbol = Symbol('retry');

/**
 * The one optimistic-concurrency loop: runs `attempt` (which reads what it needs, builds its
 * transaction and sends it) until it returns a result rather than `RETRY`, with jittered backoff
 * between attempts, up to `MAX_ATTEMPTS`. Only conflicts are retried: `transact` throws what no
 * retry can cure (validation errors) and the attempt decides what a failed condition means.
 */
export async function retryOnConflict<T>(
  operation: string,
  attempt: (attempt: number) => Promise<T | typeof RETRY>,
): Promise<T> {
  for (let n = 0; n < MAX_ATTEMPTS; n++) {
    if (n > 0) await backoff(n - 1);
    const result = await attempt(n);
    if (result !== RETRY) return result;
  }
  throw new Error(`${operation}: too much contention`);
}

/** A transaction retried as long as it only collides with concurrent ones. */
export const transactWithRetry = (
  items: TransactItem[],
  operation: string,
): Promise<Exclude<Outcome, 'conflict'>> =>
  retryOnConflict(operation, async () => {
    const outcome = await transact(items);
    return outcome === 'conflict' ? RETRY : outcome;
  });

/**
 * All items a Query matches (following `LastEvaluatedKey`), or the first `limit` of them with
 * `more` telling whether others exist.
 */
export async function queryAll(
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>,
  limit = Number.POSITIVE_INFINITY,
): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        ...input,
        TableName: tableName(),
        ExclusiveStartKey: startKey,
        // One more than asked for tells whether there are more.
        ...(Number.isFinite(limit) ? { Limit: limit + 1 - items.length } : {}),
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && items.length <= limit);
  return { items: items.slice(0, limit), more: items.length > limit };
}
