/**
 * The PutEvents port: entries onto the account's default event bus, within EventBridge's limits.
 * In AWS the SDK's client; locally the same client pointed at the recording stand-in
 * (`ENV.eventsEndpoint`, `lib/local/event-bus.ts`). Nothing here throws for a refused entry: the
 * caller gets how many were not put.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { awsClientSettings } from '#shared/aws-clients';
import { config } from '#shared/config';
import { log } from '#shared/log';

export interface BusEntry {
  readonly source: string;
  readonly detailType: string;
  /** The detail, already JSON. */
  readonly detail: string;
}

/** PutEvents: at most 10 entries a call, each (and each call's sum) under 256 KB. */
export const MAX_ENTRIES_PER_CALL = 10;
export const MAX_ENTRY_BYTES = 256 * 1024;

/** An entry's size as EventBridge counts it (its UTF-8 source, detail-type and detail; 14 bytes of Time when sent). */
export const entryBytes = (entry: BusEntry): number =>
  Buffer.byteLength(entry.source) + Buffer.byteLength(entry.detailType) + Buffer.byteLength(entry.detail);

/** The calls `entries` go in, in order: ≤ 10 entries each, their sizes summing under 256 KB. */
export function batchesOf(entries: readonly BusEntry[]): BusEntry[][] {
  const batches: BusEntry[][] = [];
  let batch: BusEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entryBytes(entry);
    if (batch.length > 0 && (batch.length === MAX_ENTRIES_PER_CALL || bytes + size > MAX_ENTRY_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(entry);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/**
 * Whether there is a bus to reach: in AWS, where Lambda and ECS name the runtime in
 * `AWS_EXECUTION_ENV` (`AWS_Lambda_nodejs22.x`, `AWS_ECS_FARGATE`), or where the local
 * stand-in's endpoint is set. Elsewhere (the admin CLI on a deployed table, a test of the data
 * alone) there is none, and nothing is sent.
 */
export const busReachable = (
  where: { readonly endpoint?: string | undefined; readonly runtime?: string | undefined } = {
    endpoint: config().eventsEndpoint,
    runtime: process.env.AWS_EXECUTION_ENV,
  },
): boolean => Boolean(where.endpoint) || Boolean(where.runtime);

let client: EventBridgeClient | undefined;
function eventBridge(): EventBridgeClient {
  if (!client) {
    client = new EventBridgeClient(awsClientSettings(config().eventsEndpoint));
  }
  return client;
}

/**
 * Puts `entries` on the default bus, in order, one call per batch. Returns how many were not put
 * (too large, refused by EventBridge); a call that fails throws (the caller counts its entries).
 */
export async function putEvents(entries: readonly BusEntry[]): Promise<number> {
  let failed = 0;
  const fitting = entries.filter((entry) => entryBytes(entry) <= MAX_ENTRY_BYTES);
  failed += entries.length - fitting.length;
  for (const batch of batchesOf(fitting)) {
    const result = await eventBridge().send(
      new PutEventsCommand({
        Entries: batch.map((entry) => ({
          Source: entry.source,
          DetailType: entry.detailType,
          Detail: entry.detail,
        })),
      }),
    );
    for (const [n, outcome] of (result.Entries ?? []).entries())
      if (outcome.ErrorCode)
        log('warn', 'event not put', {
          detailType: batch[n]?.detailType,
          errorCode: outcome.ErrorCode,
          errorMessage: outcome.ErrorMessage,
        });
    failed += result.FailedEntryCount ?? 0;
  }
  return failed;
}
