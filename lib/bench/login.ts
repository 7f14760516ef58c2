import { randomBytes, scrypt } from 'node:crypto';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { type LoadResult, runLoad } from './load.ts';
import { median, ms, percentile } from './measure.ts';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack } from './support.ts';

const derive = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  length: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

export interface LoginBenchOptions {
  /** Single scrypt derivations timed per parameter set. */
  readonly hashes: number;
  readonly concurrencies: readonly number[];
  readonly warmupMs: number;
  readonly durationMs: number;
}

interface HashTiming {
  readonly label: string;
  readonly medianMs: number;
}

interface LoginRun {
  readonly concurrency: number;
  readonly result: LoadResult;
}

export interface LoginBenchResult {
  readonly loadAverage: number;
  readonly hashes: readonly HashTiming[];
  readonly runs: readonly LoginRun[];
  readonly options: LoginBenchOptions;
}

/** One scrypt derivation's time, as `passwords.ts` runs it (libuv thread pool). */
async function timeHash(N: number, r: number, p: number, count: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await derive('bench-password-1', randomBytes(16), 32, { N, r, p, maxmem: 256 * N * r });
    samples.push(performance.now() - started);
  }
  return median(samples);
}

/**
 * Password sign-in cost: the scrypt derivation alone for the old and the current parameters, then
 * `GET /user` with Basic `login:password` (limit reservation, scrypt, release) under closed-loop
 * load at each concurrency.
 */
export async function measureLogin(options: LoginBenchOptions): Promise<LoginBenchResult> {
  const loadAverage = loadavg()[0] ?? 0;
  const hashes: HashTiming[] = [
    { label: 'N=2^14, r=8, p=1 (before)', medianMs: await timeHash(2 ** 14, 8, 1, options.hashes) },
    { label: 'N=2^14, r=8, p=5 (now)', medianMs: await timeHash(2 ** 14, 8, 5, options.hashes) },
  ];
  const { stack, endpointsFile, stop } = await startBenchStack('login');
  try {
    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const runs: LoginRun[] = [];
    for (const concurrency of options.concurrencies) {
      const result = await runLoad({
        url: `${stack.baseUrl}/user`,
        headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
        concurrency,
        warmupMs: options.warmupMs,
        durationMs: options.durationMs,
        expectStatus: 200,
        requestTimeoutMs: 60_000,
      });
      runs.push({ concurrency, result });
    }
    return { loadAverage, hashes, runs, options };
  } finally {
    await stop();
  }
}

export function loginReport(result: LoginBenchResult, machine: string): string {
  const { options } = result;
  return [
    `Measured ${machine} (1-minute load average ${result.loadAverage.toFixed(1)} before the run; the numbers scale with free CPU).`,
    '',
    `scrypt alone, median of ${options.hashes} derivations:`,
    '',
    '| Parameters | Memory | Time |',
    '|---|---|---|',
    ...result.hashes.map((hash) => `| ${hash.label} | 16 MiB | ${ms(hash.medianMs)} |`),
    '',
    `\`GET /user\` with Basic \`login:password\` (reserve attempt, scrypt N=2^14 r=8 p=5, release), ${options.warmupMs / 1000} s warm-up then ${options.durationMs / 1000} s measured per concurrency:`,
    '',
    '| Concurrency | Requests | Req/s | p50 | p95 |',
    '|---|---|---|---|---|',
    ...result.runs.map(
      ({ concurrency, result: run }) =>
        `| ${concurrency} | ${run.requests} | ${run.rps.toFixed(1)} | ${ms(percentile(run.latencies, 50))} | ${ms(percentile(run.latencies, 95))} |`,
    ),
    '',
    'A Lambda container serves one request at a time, so concurrency 1 is what a signing-in user sees; Lambda’s CPU share grows with memory (a 512 MB function gets well under one vCPU), so expect a sign-in there to take longer than the scrypt time on an idle core here. Higher concurrency shows the local stack sharing this machine’s cores and libuv’s four threads.',
  ].join('\n');
}
