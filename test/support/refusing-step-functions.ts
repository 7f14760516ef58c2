import { randomUUID } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RefusingStepFunctions {
  /** The endpoint to give the service instead of the local Step Functions endpoint. */
  readonly endpoint: string;
  /** StartExecution calls of names that match are refused while set. */
  refuse: RegExp | undefined;
  /** The names of the StartExecution calls refused so far. */
  readonly refused: string[];
  stop(): Promise<void>;
}

/** Step Functions' own words (API reference, StartExecution, ExecutionLimitExceeded). */
const LIMIT_MESSAGE =
  'The maximum number of running executions has been reached. Running executions must end or be stopped before a new execution can be started.';

/**
 * A stand-in for Step Functions refusing to start an execution (the account's quota of open
 * executions reached), in front of the local endpoint: an HTTP proxy that forwards each request,
 * and answers a StartExecution whose name matches `refuse` as Step Functions does on the wire
 * (HTTP 400, `application/x-amz-json-1.0`, `__type` `ExecutionLimitExceeded`).
 */
export async function refusingStepFunctions(target: string): Promise<RefusingStepFunctions> {
  const upstream = new URL(target);
  const refused: string[] = [];
  const state: { refuse: RegExp | undefined } = { refuse: undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.headers['x-amz-target'] === 'AWSStepFunctions.StartExecution' && state.refuse) {
        const name = String((JSON.parse(body.toString('utf8')) as { name?: unknown }).name ?? '');
        if (state.refuse.test(name)) {
          refused.push(name);
          res
            .writeHead(400, {
              'content-type': 'application/x-amz-json-1.0',
              'x-amzn-requestid': randomUUID(),
            })
            .end(JSON.stringify({ __type: 'ExecutionLimitExceeded', message: LIMIT_MESSAGE }));
          return;
        }
      }
      const forwarded = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => res.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.defineProperty(
    {
      endpoint: `http://127.0.0.1:${port}`,
      refused,
      stop: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    },
    'refuse',
    {
      enumerable: true,
      get: () => state.refuse,
      set: (value: RegExp | undefined) => {
        state.refuse = value;
      },
    },
  ) as RefusingStepFunctions;
}
