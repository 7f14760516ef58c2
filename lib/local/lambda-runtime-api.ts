/**
 * A stand-in of the Lambda Runtime API (version 2018-06-01) for one execution environment: the
 * HTTP interface a runtime interface client (`aws-lambda-ric` in the worker image) polls for
 * events and answers on. Lambda's own contract, kept here because the client depends on it:
 *
 * - `GET /runtime/invocation/next` waits until there is an event, then answers it with the
 *   `Lambda-Runtime-Aws-Request-Id`, `-Deadline-Ms`, `-Invoked-Function-Arn` and `-Trace-Id` headers;
 * - `POST /runtime/invocation/{id}/response` ends the invocation with its result (202); a result
 *   over 6 MB is refused with 413 and the invocation fails with `Function.ResponseSizeTooLarge`;
 * - `POST /runtime/invocation/{id}/error` ends it with `{errorType, errorMessage, stackTrace}`;
 * - `POST /runtime/init/error` reports that the handler could not load: the waiting invocation,
 *   and every later one, fails with the error's type.
 *
 * One environment runs one invocation at a time, as Lambda's do.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const PREFIX = '/2018-06-01/runtime';
/** Lambda's limit on a synchronous invocation's response. */
export const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;

/** A failed invocation as Lambda reports it: `name` is the error type Step Functions matches. */
export class FunctionError extends Error {
  constructor(errorType: string, errorMessage: string, stackTrace: readonly string[] = []) {
    super(errorMessage);
    this.name = errorType;
    this.stack = [`${errorType}: ${errorMessage}`, ...stackTrace].join('\n');
  }
}

interface Pending {
  readonly id: string;
  readonly event: string;
  /** Called when the runtime takes the event: the invoke phase (and its timeout) starts then. */
  readonly delivered?: (() => void) | undefined;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

export interface RuntimeApiOptions {
  /** The function's ARN, as the `Lambda-Runtime-Invoked-Function-Arn` header names it. */
  readonly functionArn: string;
  /** The function's timeout: the deadline each event carries. */
  readonly timeoutMs: number;
}

export interface RuntimeApi {
  /** `127.0.0.1:<port>`, the value of `AWS_LAMBDA_RUNTIME_API`. */
  readonly address: string;
  /**
   * Hands `event` to the runtime and waits for its answer (rejects with `FunctionError`);
   * `delivered` is called when the runtime takes it (after its init, on a new environment).
   */
  invoke(event: unknown, delivered?: () => void): Promise<unknown>;
  /** Fails the invocation under way (the environment died or timed out). */
  abort(error: FunctionError): void;
  close(): Promise<void>;
}

export async function startRuntimeApi(options: RuntimeApiOptions): Promise<RuntimeApi> {
  let initError: FunctionError | undefined;
  let queued: Pending | undefined;
  let running: Pending | undefined;
  /** A runtime waiting in `next` for the queued event. */
  let waiting: ((pending: Pending) => void) | undefined;

  const deliver = (pending: Pending, response: ServerResponse) => {
    running = pending;
    pending.delivered?.();
    response.writeHead(200, {
      'content-type': 'application/json',
      'lambda-runtime-aws-request-id': pending.id,
      'lambda-runtime-deadline-ms': String(Date.now() + options.timeoutMs),
      'lambda-runtime-invoked-function-arn': options.functionArn,
      'lambda-runtime-trace-id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replaceAll('-', '').slice(0, 24)};Sampled=0`,
    });
    response.end(pending.event);
  };

  const finish = (id: string | undefined, outcome: (pending: Pending) => void): boolean => {
    const pending = running;
    if (!pending || pending.id !== id) return false;
    running = undefined;
    outcome(pending);
    return true;
  };

  /** Fails the invocation under way or waiting for the runtime, if any. */
  const failPending = (error: FunctionError) => {
    const pending = running ?? queued;
    running = undefined;
    queued = undefined;
    pending?.reject(error);
  };

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const body = await readBody(request);
    const path = (request.url ?? '').replace(PREFIX, '');
    const accepted = () => {
      response.writeHead(202, { 'content-type': 'application/json' });
      response.end('{"status":"OK"}');
    };
    const refuse = (status: number, errorType: string, errorMessage: string) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ errorType, errorMessage }));
    };
    if (request.method === 'GET' && path === '/invocation/next') {
      if (queued) {
        const pending = queued;
        queued = undefined;
        deliver(pending, response);
      } else {
        waiting = (pending) => deliver(pending, response);
      }
      return;
    }
    const invocation = /^\/invocation\/([^/]+)\/(response|error)$/.exec(path);
    if (request.method === 'POST' && invocation) {
      const [, id, kind] = invocation;
      if (kind === 'response' && body.length > MAX_RESPONSE_BYTES) {
        finish(id, (pending) =>
          pending.reject(
            new FunctionError(
              'Function.ResponseSizeTooLarge',
              `Response payload size exceeded maximum allowed payload size (${MAX_RESPONSE_BYTES} bytes).`,
            ),
          ),
        );
        refuse(
          413,
          'RequestEntityTooLarge',
          `Exceeded maximum allowed payload size (${MAX_RESPONSE_BYTES} bytes).`,
        );
        return;
      }
      const ended = finish(id, (pending) => {
        if (kind === 'response')
          pending.resolve(body.length === 0 ? null : JSON.parse(body.toString('utf8')));
        else pending.reject(reportedError(body, request.headers['lambda-runtime-function-error-type']));
      });
      if (ended) accepted();
      else refuse(400, 'InvalidRequestID', 'Invalid request ID');
      return;
    }
    if (request.method === 'POST' && path === '/init/error') {
      initError = reportedError(body, request.headers['lambda-runtime-function-error-type']);
      failPending(initError);
      accepted();
      return;
    }
    refuse(404, 'NotFound', `No route for ${request.method} ${request.url}`);
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ errorType: 'ServiceException', errorMessage: String(error) }));
    });
  });
  // A `next` poll waits as long as there is no event: no timeouts on the runtime's connection.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    address: `127.0.0.1:${port}`,
    invoke(event, delivered) {
      if (initError) return Promise.reject(initError);
      if (queued || running) return Promise.reject(new Error('the environment is busy'));
      return new Promise((resolve, reject) => {
        const pending: Pending = {
          id: randomUUID(),
          event: JSON.stringify(event),
          delivered,
          resolve,
          reject,
        };
        if (waiting) {
          const deliverTo = waiting;
          waiting = undefined;
          deliverTo(pending);
        } else {
          queued = pending;
        }
      });
    },
    abort: failPending,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The `{errorType, errorMessage, stackTrace}` a runtime posts, or what Lambda makes of a bad one. */
function reportedError(body: Buffer, typeHeader: string | string[] | undefined): FunctionError {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as {
      errorType?: unknown;
      errorMessage?: unknown;
      stackTrace?: unknown;
    };
    const errorType =
      typeof parsed.errorType === 'string' ? parsed.errorType : String(typeHeader ?? 'Unhandled');
    const stack = Array.isArray(parsed.stackTrace) ? parsed.stackTrace.map(String) : [];
    return new FunctionError(errorType, String(parsed.errorMessage ?? ''), stack);
  } catch {
    return new FunctionError(String(typeHeader ?? 'Unhandled'), body.toString('utf8'));
  }
}
