/**
 * A stand-in for DynamoDB's throttling, in front of DynamoDB Local (which never throttles): an
 * HTTP proxy that forwards each request, or refuses a chosen share of them (or a burst of the next
 * ones) with the answer DynamoDB gives when it throttles, as the SDK reads it off the wire:
 * HTTP 400, `Content-Type: application/x-amz-json-1.0`, `x-amzn-RequestId`, `x-amz-crc32` and a
 * body whose `__type` names the error:
 * - `ProvisionedThroughputExceededException` (a table or index over its capacity, on-demand too),
 *   `ThrottlingException` and `RequestLimitExceeded` (the account's throughput limit), in turn;
 * - a transaction (`TransactWriteItems`, `TransactGetItems`) is cancelled as DynamoDB cancels it:
 *   `TransactionCanceledException` with one `ThrottlingError` among its `CancellationReasons`
 *   (the others `None`);
 * - a batch (`BatchWriteItem`, `BatchGetItem`) is throttled in part as DynamoDB throttles one: a 200
 *   answer whose `UnprocessedItems` / `UnprocessedKeys` hold a chosen share of its items (never all:
 *   DynamoDB then refuses the whole call); only the rest reaches DynamoDB Local. Each re-send of an
 *   item left unprocessed is recorded with how long after the answer that left it it came
 *   (`batch-unprocessed.ts`).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { type BatchResends, leaveUnprocessed } from './batch-unprocessed.ts';

const PREFIX = 'com.amazonaws.dynamodb.v20120810#';

/** DynamoDB's own messages (API reference, "Common errors" and each action's errors). */
const THROTTLES = [
  {
    type: `${PREFIX}ProvisionedThroughputExceededException`,
    message:
      'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
  },
  {
    type: 'com.amazon.coral.availability#ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput.',
  },
  {
    type: `${PREFIX}RequestLimitExceeded`,
    message:
      'Throughput exceeds the current throughput limit for your account. Please contact AWS Support at https://aws.amazon.com/support request a limit increase',
  },
] as const;

const THROTTLING_ERROR_MESSAGE =
  'Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html';

export interface ThrottlingOptions {
  /** DynamoDB Local's endpoint. */
  readonly target: string;
  /** The share of requests refused, from 0 (none) to 1 (all). */
  readonly share?: number;
}

export interface ThrottlingProxy {
  /** The endpoint to give the service instead of DynamoDB Local's. */
  readonly endpoint: string;
  /** The share of requests refused from now on, 0 to 1. */
  share: number;
  /**
   * The share of a batch's items left unprocessed (0 to 1; at least one item of each batch is
   * processed, so 1 means one item per call).
   */
  unprocessed: number;
  /** The re-sends of items a batch left unprocessed, as they came. */
  readonly resends: BatchResends;
  /** Refuses the next `count` requests whatever the share. */
  burst(count: number): void;
  /** Requests forwarded and refused so far, by action (`PutItem`, `TransactWriteItems`, …). */
  readonly forwarded: Map<string, number>;
  readonly throttled: Map<string, number>;
  stop(): Promise<void>;
}

const bump = (counts: Map<string, number>, action: string) =>
  counts.set(action, (counts.get(action) ?? 0) + 1);

function send(response: ServerResponse, body: Record<string, unknown>): void {
  const text = Buffer.from(JSON.stringify(body));
  response.writeHead(400, {
    'Content-Type': 'application/x-amz-json-1.0',
    'Content-Length': String(text.length),
    'x-amzn-RequestId': randomUUID().replaceAll('-', '').toUpperCase(),
    'x-amz-crc32': String(crc32(text)),
  });
  response.end(text);
}

/** The refusal of one request: a transaction's cancellation, or the next error of `THROTTLES`. */
function refuse(response: ServerResponse, action: string, body: Buffer, turn: number): void {
  if (action === 'TransactWriteItems' || action === 'TransactGetItems') {
    const items = (JSON.parse(body.toString('utf8')) as { TransactItems?: unknown[] }).TransactItems ?? [];
    const throttledItem = turn % Math.max(1, items.length);
    const reasons = items.map((_, index) =>
      index === throttledItem
        ? { Code: 'ThrottlingError', Message: THROTTLING_ERROR_MESSAGE }
        : { Code: 'None' },
    );
    send(response, {
      __type: `${PREFIX}TransactionCanceledException`,
      CancellationReasons: reasons,
      Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
    });
    return;
  }
  const error = THROTTLES[turn % THROTTLES.length] ?? THROTTLES[0];
  send(response, { __type: error.type, message: error.message });
}

async function bodyOf(incoming: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startThrottlingProxy(options: ThrottlingOptions): Promise<ThrottlingProxy> {
  const target = new URL(options.target);
  let burst = 0;
  let turn = 0;
  const forwarded = new Map<string, number>();
  const throttled = new Map<string, number>();
  const resends: BatchResends = { list: [], left: new Map() };
  const proxy: Omit<ThrottlingProxy, 'endpoint' | 'stop'> = {
    share: options.share ?? 0,
    unprocessed: 0,
    resends,
    burst: (count) => {
      burst = count;
    },
    forwarded,
    throttled,
  };
  const server = createServer((incoming, response) => {
    void (async () => {
      const body = await bodyOf(incoming);
      const action = String(incoming.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      if (burst > 0 || Math.random() < proxy.share) {
        burst = Math.max(0, burst - 1);
        bump(throttled, action);
        refuse(response, action, body, turn++);
        return;
      }
      bump(forwarded, action);
      const partial =
        proxy.unprocessed > 0 ? leaveUnprocessed(action, body, proxy.unprocessed, resends) : undefined;
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          method: incoming.method,
          path: incoming.url,
          headers: {
            ...incoming.headers,
            host: target.host,
            ...(partial ? { 'content-length': String(partial.forwarded.length) } : {}),
          },
        },
        (answer) => {
          if (partial && answer.statusCode === 200) {
            void bodyOf(answer).then((text) => {
              const merged = Buffer.from(partial.answer(text));
              response.writeHead(200, {
                ...answer.headers,
                'content-length': String(merged.length),
                'x-amz-crc32': String(crc32(merged)),
              });
              response.end(merged);
            });
            return;
          }
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on('error', () => response.destroy());
      upstream.end(partial?.forwarded ?? body);
    })().catch(() => response.destroy());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
