/**
 * Lambda's asynchronous invocation on this machine: a loopback endpoint speaking the one call the
 * handlers make (`Invoke` with `InvocationType: Event`), so their production `LambdaClient` only
 * points its `endpoint` here (ENV.lambdaEndpoint). It answers 202 once the event is queued and
 * then runs the function's handler in this process, as the zip function it is in AWS. Kept from
 * AWS because the calling code depends on it: the caller never waits for the handler; a handler
 * that throws is retried (Lambda: twice, about one and two minutes later), and an event that fails
 * every attempt goes to the dead-letter destination (here a list a test can read).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asZipFunction } from './zip-runtime.ts';

export type EventHandler = (event: unknown) => Promise<unknown>;

export interface LambdaEventsOptions {
  /** Handlers by function name. */
  readonly functions: Readonly<Record<string, () => Promise<EventHandler>>>;
  /** Retries of a failing event (Lambda's default and the deployed setting: 2). */
  readonly retries: number;
  /** Wait before each retry, in ms (Lambda: about 60 000, then 120 000). */
  readonly retryDelaysMs?: readonly number[];
}

export interface DeadLetter {
  readonly functionName: string;
  readonly event: unknown;
  readonly error: string;
}

export interface LambdaEvents {
  /** `http://127.0.0.1:<port>`, for `new LambdaClient({ endpoint })`. */
  readonly endpoint: string;
  readonly deadLetters: readonly DeadLetter[];
  /** Closes the endpoint and waits for the events under way (pending retries are dropped). */
  stop(): Promise<void>;
}

const INVOKE = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

export async function startLambdaEvents(options: LambdaEventsOptions): Promise<LambdaEvents> {
  const delays = options.retryDelaysMs ?? [60_000, 120_000];
  const deadLetters: DeadLetter[] = [];
  const running = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const run = (functionName: string, load: () => Promise<EventHandler>, event: unknown, attempt: number) => {
    const invocation = load()
      .then((handler) => asZipFunction(() => handler(event)))
      .then(
        () => undefined,
        (error: unknown) => {
          if (stopped) return;
          if (attempt >= options.retries) {
            deadLetters.push({ functionName, event, error: (error as Error).message });
            return;
          }
          const timer = setTimeout(
            () => {
              timers.delete(timer);
              run(functionName, load, event, attempt + 1);
            },
            delays[attempt] ?? delays.at(-1) ?? 0,
          );
          timers.add(timer);
        },
      );
    running.add(invocation);
    void invocation.finally(() => running.delete(invocation));
  };

  const answer = (res: ServerResponse, status: number, body: unknown, type?: string) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(type ? { 'x-amzn-errortype': type } : {}),
    });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const name = decodeURIComponent(INVOKE.exec(req.url?.split('?')[0] ?? '')?.[1] ?? '');
      const load = options.functions[name];
      if (req.method !== 'POST' || !load)
        return answer(res, 404, { message: `Function not found: ${name}` }, 'ResourceNotFoundException');
      if (req.headers['x-amz-invocation-type'] !== 'Event')
        return answer(
          res,
          400,
          { message: 'only asynchronous invocation is served here' },
          'InvalidParameterValueException',
        );
      let event: unknown;
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        return answer(res, 400, { message: 'the payload is not JSON' }, 'InvalidRequestContentException');
      }
      answer(res, 202, undefined);
      run(name, load, event, 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    deadLetters,
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...running]);
    },
  };
}
