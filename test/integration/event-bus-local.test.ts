import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalEventBus, recordedEvents, startLocalEventBus } from '#local/event-bus';

let bus: LocalEventBus;
let client: EventBridgeClient;

beforeAll(async () => {
  bus = await startLocalEventBus({ file: join(await mkdtemp(join(tmpdir(), 'event-bus-')), 'events.jsonl') });
  client = new EventBridgeClient({
    endpoint: bus.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(async () => {
  client?.destroy();
  await bus?.stop();
});

const entry = (n: number, detail = JSON.stringify({ n })) => ({
  Source: 'test.source',
  DetailType: 'Thing Happened',
  Detail: detail,
});

describe('the local EventBridge stand-in, through the SDK', () => {
  it('records put events in order, shaped as a target receives them', async () => {
    const out = await client.send(new PutEventsCommand({ Entries: [entry(1), entry(2)] }));
    expect(out.FailedEntryCount).toBe(0);
    expect(out.Entries?.map((e) => typeof e.EventId)).toEqual(['string', 'string']);
    const events = await recordedEvents(bus.file);
    expect(events.map((e) => e.detail)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(events[0]).toMatchObject({ version: '0', source: 'test.source', 'detail-type': 'Thing Happened' });
  });

  it('refuses what EventBridge refuses: 11 entries, 256 KB in all, a Detail that is not an object', async () => {
    const before = (await recordedEvents(bus.file)).length;
    const tooMany = Array.from({ length: 11 }, (_, n) => entry(n));
    await expect(client.send(new PutEventsCommand({ Entries: tooMany }))).rejects.toMatchObject({
      name: 'ValidationException',
    });
    const big = JSON.stringify({ pad: 'x'.repeat(130 * 1024) });
    await expect(
      client.send(new PutEventsCommand({ Entries: [entry(0, big), entry(1, big)] })),
    ).rejects.toMatchObject({
      name: 'ValidationException',
    });
    await expect(client.send(new PutEventsCommand({ Entries: [entry(0, '[1]')] }))).rejects.toMatchObject({
      name: 'ValidationException',
    });
    expect((await recordedEvents(bus.file)).length).toBe(before);
  });

  it('fails an entry for another bus, and records the rest', async () => {
    const out = await client.send(
      new PutEventsCommand({ Entries: [{ ...entry(7), EventBusName: 'custom' }, entry(8)] }),
    );
    expect(out.FailedEntryCount).toBe(1);
    expect(out.Entries?.[0]?.ErrorCode).toBe('ResourceNotFoundException');
    expect((await recordedEvents(bus.file)).at(-1)?.detail).toEqual({ n: 8 });
  });
});
