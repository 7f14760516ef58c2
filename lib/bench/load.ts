import { Agent, request } from 'node:http';
import { percentile } from './measure.ts';

export interface LoadOptions {
  /** Loopback only: `http://127.0.0.1:<port>/path`. */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** A POST body: fixed, or one per request (the device poll rotates through its codes); without it, GETs. */
  readonly body?: string | (() => string);
  /** Requests in flight at any time, each on its own kept-alive connection. */
  readonly concurrency: number;
  /** Requests completing in this first stretch are not counted. */
  readonly warmupMs: number;
  /** The measured stretch after the warm-up; no request starts after it ends. */
  readonly durationMs: number;
  /** Any other status fails the run: a benchmark of error responses measures nothing useful. */
  readonly expectStatus: number;
  /** One request taking longer than this fails the run, so it always ends. */
  readonly requestTimeoutMs?: number;
}

export interface LoadResult {
  /** Requests completed within the measured stretch. */
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  /** Milliseconds, over the measured requests. */
  readonly p50: number;
  readonly p99: number;
  /** Every measured request's latency in milliseconds, for pooling runs. */
  readonly latencies: readonly number[];
}

/** One GET (or POST of `body`) on a kept-alive connection; resolves with the status once the body has been read. */
function get(
  agent: Agent,
  url: URL,
  headers: Readonly<Record<string, string>>,
  timeoutMs: number,
  body?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? headers : { ...headers, 'Content-Length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no response within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A closed-loop load: `concurrency` clients each send the next request as soon as the previous
 * answers, for a warm-up and then a fixed duration, and stop by themselves. Throughput is the
 * requests completed within the measured stretch divided by its length; latency is send → last
 * byte of the body.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  if (url.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    throw new Error(`the load loop only targets loopback, not ${options.url}`);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const headers = { ...options.headers, Connection: 'keep-alive' };
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  const measureFrom = performance.now() + options.warmupMs;
  const measureTo = measureFrom + options.durationMs;
  const latencies: number[] = [];

  const client = async () => {
    while (performance.now() < measureTo) {
      const sent = performance.now();
      const body = typeof options.body === 'function' ? options.body() : options.body;
      const status = await get(agent, url, headers, timeoutMs, body);
      const done = performance.now();
      if (status !== options.expectStatus)
        throw new Error(
          `${options.body === undefined ? 'GET' : 'POST'} ${url.pathname} answered ${status}, expected ${options.expectStatus}`,
        );
      if (done >= measureFrom && done <= measureTo) latencies.push(done - sent);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, client));
  } finally {
    agent.destroy();
  }
  const seconds = options.durationMs / 1000;
  return {
    requests: latencies.length,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    latencies,
  };
}
