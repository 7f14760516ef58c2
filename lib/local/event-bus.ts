/**
 * A local EventBridge endpoint: a loopback HTTP server speaking the one operation the service
 * calls, PutEvents (AWS JSON 1.1, `X-Amz-Target: AWSEvents.PutEvents`), onto the default bus. It
 * records each event as a rule's target would receive it and appends it, one JSON line each, to
 * `file` (`.data/events.jsonl` for `npm start`), where tests and people read them. Functions keep
 * their production `EventBridgeClient` and only point its `endpoint` here (ENV.eventsEndpoint).
 *
 * EventBridge's rules that the calling code must respect are enforced: 1–10 entries a call, each
 * with Source, DetailType and a Detail that is a JSON object, their sizes together at most 256 KB
 * (a `ValidationException` otherwise, nothing recorded); an event bus other than the default is
 * refused per entry (`ResourceNotFoundException`, counted in FailedEntryCount).
 */
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';

/** An event as EventBridge delivers it to a rule's target. */
export interface RecordedEvent {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: Record<string, unknown>;
}

export interface LocalEventBus {
  /** `http://127.0.0.1:<port>`, for `new EventBridgeClient({ endpoint })`. */
  readonly endpoint: string;
  /** The JSON-lines file every recorded event is appended to. */
  readonly file: string;
  stop(): Promise<void>;
}

const MAX_ENTRIES = 10;
const MAX_BYTES = 256 * 1024;

class ValidationError extends Error {}

interface Entry {
  Source?: unknown;
  DetailType?: unknown;
  Detail?: unknown;
  Resources?: unknown;
  EventBusName?: unknown;
  Time?: unknown;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** EventBridge's size of an entry: source, detail-type, detail, resources, and 14 bytes for a Time. */
const sizeOf = (entry: Entry): number =>
  Buffer.byteLength(text(entry.Source)) +
  Buffer.byteLength(text(entry.DetailType)) +
  Buffer.byteLength(text(entry.Detail)) +
  (Array.isArray(entry.Resources)
    ? entry.Resources.reduce((n: number, r) => n + Buffer.byteLength(text(r)), 0)
    : 0) +
  (entry.Time === undefined ? 0 : 14);

function checked(body: unknown): Entry[] {
  const entries = (body as { Entries?: unknown } | null)?.Entries;
  if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_ENTRIES)
    throw new ValidationError(`Entries must hold 1 to ${MAX_ENTRIES} entries`);
  for (const entry of entries as Entry[]) {
    if (!text(entry.Source) || !text(entry.DetailType) || !text(entry.Detail))
      throw new ValidationError('Each entry needs Source, DetailType and Detail');
    let detail: unknown;
    try {
      detail = JSON.parse(text(entry.Detail));
    } catch {
      throw new ValidationError('Detail is malformed');
    }
    if (typeof detail !== 'object' || detail === null || Array.isArray(detail))
      throw new ValidationError('Detail must be a JSON object');
  }
  const total = (entries as Entry[]).reduce((n, entry) => n + sizeOf(entry), 0);
  if (total > MAX_BYTES)
    throw new ValidationError('Total size of the entries in the request is over the limit');
  return entries as Entry[];
}

const isDefaultBus = (name: unknown): boolean =>
  name === undefined ||
  name === 'default' ||
  (typeof name === 'string' && name.endsWith(':event-bus/default'));

/** Starts the endpoint; `file` is emptied first (the bus of one run of the stack). */
export async function startLocalEventBus(options: {
  readonly file: string;
  readonly region?: string;
  readonly accountId?: string;
}): Promise<LocalEventBus> {
  const region = options.region ?? 'us-east-1';
  const account = options.accountId ?? '123456789012';
  await mkdir(dirname(options.file), { recursive: true });
  await writeFile(options.file, '');
  // Appends are chained so that events reach the file in the order they were put.
  let appending: Promise<void> = Promise.resolve();

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, {
        'content-type': 'application/x-amz-json-1.1',
        'x-amzn-requestid': randomUUID(),
      });
      response.end(JSON.stringify(body));
    };
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = request.headers['x-amz-target'];
    if (request.method !== 'POST' || target !== 'AWSEvents.PutEvents') {
      send(400, { __type: 'UnknownOperationException', message: `Unknown operation: ${String(target)}` });
      return;
    }
    try {
      const entries = checked(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      const time = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const results: Record<string, string>[] = [];
      const lines: string[] = [];
      for (const entry of entries) {
        if (!isDefaultBus(entry.EventBusName)) {
          results.push({ ErrorCode: 'ResourceNotFoundException', ErrorMessage: 'Event bus does not exist.' });
          continue;
        }
        const event: RecordedEvent = {
          version: '0',
          id: randomUUID(),
          'detail-type': text(entry.DetailType),
          source: text(entry.Source),
          account,
          time,
          region,
          resources: Array.isArray(entry.Resources) ? entry.Resources.map(text) : [],
          detail: JSON.parse(text(entry.Detail)) as Record<string, unknown>,
        };
        results.push({ EventId: event.id });
        lines.push(`${JSON.stringify(event)}\n`);
      }
      const written = appending.then(() => appendFile(options.file, lines.join('')));
      appending = written.catch(() => undefined);
      await written;
      send(200, { FailedEntryCount: results.filter((r) => r.ErrorCode).length, Entries: results });
    } catch (error) {
      if (error instanceof ValidationError || error instanceof SyntaxError)
        send(400, { __type: 'ValidationException', message: error.message });
      else send(500, { __type: 'InternalException', message: String(error) });
    }
  }

  const server: Server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    file: options.file,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The events the local bus recorded in `file`, in the order they were put. */
export async function recordedEvents(file: string): Promise<RecordedEvent[]> {
  const content = await readFile(file, 'utf8').catch(() => '');
  return content
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RecordedEvent);
}
