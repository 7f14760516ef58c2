/**
 * DynamoDB's partial throttling of a batch, for the throttling stand-in: of a `BatchWriteItem`'s
 * requests or a `BatchGetItem`'s keys (one table each, as the service sends them), a share is
 * left unprocessed and the rest forwarded; the answer DynamoDB Local gives for the rest then gets
 * the unprocessed part in `UnprocessedItems` / `UnprocessedKeys`, as DynamoDB answers (200). At
 * least one item of each call is processed: DynamoDB refuses a call none of whose items it can
 * process with `ProvisionedThroughputExceededException` instead.
 */

/** One item sent again after a batch had left it unprocessed. */
export interface BatchResend {
  readonly action: string;
  /** How many times the item had been left before (0 for its first re-send). */
  readonly retry: number;
  /** Milliseconds from the answer that left it to the request that sent it again. */
  readonly afterMs: number;
}

export interface BatchResends {
  readonly list: BatchResend[];
  /** Items left unprocessed: how many times, and when last if not yet sent again. */
  readonly left: Map<string, { at: number | undefined; times: number }>;
}

interface Partial {
  /** The request to forward: the processed part only. */
  readonly forwarded: Buffer;
  /** DynamoDB Local's answer with the unprocessed part added. */
  answer(upstream: Buffer): string;
}

type Batch = { RequestItems?: Record<string, unknown> };

/** The partial throttling of one request, or undefined when it is not a batch of one table. */
export function leaveUnprocessed(
  action: string,
  body: Buffer,
  share: number,
  resends: BatchResends,
): Partial | undefined {
  if (action !== 'BatchWriteItem' && action !== 'BatchGetItem') return undefined;
  const request = JSON.parse(body.toString('utf8')) as Batch;
  const [table, ...others] = Object.keys(request.RequestItems ?? {});
  if (table === undefined || others.length > 0) return undefined;
  const entry = request.RequestItems?.[table];
  const items = (action === 'BatchWriteItem' ? entry : (entry as { Keys: unknown[] }).Keys) as unknown[];
  const now = Date.now();
  for (const item of items) {
    const seen = resends.left.get(JSON.stringify(item));
    if (seen?.at === undefined) continue;
    resends.list.push({ action, retry: seen.times - 1, afterMs: now - seen.at });
    seen.at = undefined;
  }
  const kept = Math.floor(Math.random() * items.length);
  const left = items.filter((_, index) => index !== kept && Math.random() < share);
  const processed = items.filter((item) => !left.includes(item));
  const part = (chosen: unknown[]) =>
    action === 'BatchWriteItem' ? chosen : { ...(entry as object), Keys: chosen };
  return {
    forwarded: Buffer.from(JSON.stringify({ ...request, RequestItems: { [table]: part(processed) } })),
    answer(upstream) {
      const at = Date.now();
      for (const item of left) {
        const key = JSON.stringify(item);
        const times = (resends.left.get(key)?.times ?? 0) + 1;
        resends.left.set(key, { at, times });
      }
      const answer = JSON.parse(upstream.toString('utf8')) as Record<string, unknown>;
      const field = action === 'BatchWriteItem' ? 'UnprocessedItems' : 'UnprocessedKeys';
      return JSON.stringify({ ...answer, [field]: left.length > 0 ? { [table]: part(left) } : {} });
    },
  };
}
