import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrottlingProxy, type ThrottlingProxy } from '#local/dynamodb-throttling';
import { freshTable } from '#test/dynamodb';

/*
 * A batch DynamoDB processes in part (a 200 answer with `UnprocessedItems` / `UnprocessedKeys`),
 * through the throttling stand-in before DynamoDB Local: the data layer sends the unprocessed part
 * again with backoff until all of it is written or read, and gives up as `TransientFailure` when
 * the throttling outlasts its attempts, instead of sending again at once as long as it lasts.
 */

let client: typeof import('#data/client');
let proxy: ThrottlingProxy;

const items = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => ({
    PK: `BATCH#${prefix}`,
    SK: `ITEM#${String(index).padStart(4, '0')}`,
    value: index,
  }));

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

beforeAll(async () => {
  const table = await freshTable();
  proxy = await startThrottlingProxy({ target: table.endpoint });
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = proxy.endpoint;
  client = await import('#data/client');
});
afterAll(async () => {
  await proxy?.stop();
});

describe('a batch DynamoDB processes in part', () => {
  it('is sent again with growing, jittered waits until every item is written and read', async () => {
    const written = items('partial', 500);
    proxy.resends.list.length = 0;
    proxy.unprocessed = 0.2;
    await client.batchWrite(written.map((Item) => ({ PutRequest: { Item } })));
    const read = new Map<string, Record<string, unknown>>();
    for (let start = 0; start < written.length; start += 100)
      for (const [key, item] of await client.getItems(written.slice(start, start + 100), true))
        read.set(key, item);
    proxy.unprocessed = 0;

    expect([...read.values()].sort((a, b) => String(a.SK).localeCompare(String(b.SK)))).toEqual(written);
    const resends = proxy.resends.list;
    const writes = resends.filter((resend) => resend.action === 'BatchWriteItem');
    expect(writes.length).toBeGreaterThan(50);
    expect(resends.some((resend) => resend.action === 'BatchGetItem')).toBe(true);
    // The second and later re-sends of an item wait a random part of 100 ms, 200 ms, … (50 ms on
    // average at least); re-sent at once they came within a few milliseconds.
    const later = resends.filter((resend) => resend.retry >= 1).map((resend) => resend.afterMs);
    expect(later.length).toBeGreaterThan(5);
    console.log(
      `${resends.length} items re-sent; mean wait ${Math.round(mean(resends.map((resend) => resend.afterMs)))} ms, from the 2nd re-send on ${Math.round(mean(later))} ms`,
    );
    expect(mean(later), `${later.length} later re-sends: ${later.join(', ')} ms`).toBeGreaterThan(25);
    // Never more sends of an item than the SDK's attempts of a call.
    expect(Math.max(...resends.map((resend) => resend.retry))).toBeLessThan(7);
  });

  it('gives up as TransientFailure after 8 spaced sends when the throttling outlasts them', async () => {
    const written = items('throttled', 25);
    proxy.resends.list.length = 0;
    // One item of each call processed: 25 calls would be needed.
    proxy.unprocessed = 1;
    const outcome = await client.batchWrite(written.map((Item) => ({ PutRequest: { Item } }))).then(
      () => 'written',
      (error: unknown) => error,
    );
    proxy.unprocessed = 0;

    // The wait before each re-send (every item of one re-send was left by the same answer).
    const waits = new Map(proxy.resends.list.map((resend) => [resend.retry, resend.afterMs]));
    const waited = [...waits.values()].reduce((sum, wait) => sum + wait, 0);
    expect(outcome, `${waits.size + 1} sends, ${waited} ms of waits`).toMatchObject({
      name: 'TransientFailure',
      status: 503,
    });
    expect(waits.size + 1).toBe(8);
    console.log(`gave up after ${waits.size + 1} sends and ${waited} ms of waits`);
    // Seven waits of a random part of 50 ms, 100 ms, … 1 s (1.8 s on average).
    expect(waited).toBeGreaterThan(300);
    const read = await client.getItems(written, true);
    expect(read.size).toBe(8);
  });
});
