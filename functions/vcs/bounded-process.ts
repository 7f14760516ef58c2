/**
 * Running a version-control tool (git, hg) on hostile input: its own process group, stopped whole
 * when its time is up, when the caller aborts (its `signal`, or the ambient one of the import step
 * it runs in: `cancellation.ts`), or when it prints more than it may; its stderr kept (the last
 * 8 KiB, credentials in URLs removed) and handed out line by line for progress.
 */
import { ambientSignals } from './cancellation.ts';
import { launchGroup } from './launcher.ts';

export interface BoundedRun {
  readonly cwd: string;
  /** The whole environment (nothing is inherited). */
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly input?: string | Buffer | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Each line the tool writes to stderr (split on CR and LF). */
  readonly onProgress?: ((line: string) => void) | undefined;
  /** Largest stdout kept (default 256 MiB); more fails the call. */
  readonly maxStdoutBytes?: number | undefined;
  /**
   * Reads stdout as it comes instead of keeping it (the call then resolves with an empty buffer
   * and `maxStdoutBytes` does not apply). What it throws kills the tool and rejects the call.
   */
  readonly onStdout?: ((chunk: Buffer) => void) | undefined;
  /**
   * A secret handed to the tool on file descriptor 3 (`SECRET_FD`), written once and closed: never
   * in arguments, the environment or a file. Children inherit the descriptor; the first reader
   * drains it, so another process that reads it later gets nothing.
   */
  readonly secret?: string | undefined;
}

/** The descriptor `BoundedRun.secret` arrives on. */
export { SECRET_FD } from './launcher.ts';

/**
 * Why a run failed: the exit code, the tail of stderr, whether the time ran out, and the tail of
 * stdout (some tools report there: `git fsck`), both with credentials in URLs removed.
 */
export type Failure = (exitCode: number | null, stderr: string, timedOut: boolean, stdout: string) => Error;

/** How much of stdout and of stderr a failure keeps (the end: where tools say why they stopped). */
export const FAILURE_TAIL_CHARS = 8192;

/** `scheme://user:secret@host` → `scheme://***@host` in anything a tool printed. */
export const redactCredentials = (text: string): string => text.replace(/(\w+:\/\/)[^/@\s]*@/g, '$1***@');

/** Runs `command args`; resolves with stdout, rejects with what `fail` makes of the failure. */
export function runBounded(
  command: string,
  args: readonly string[],
  options: BoundedRun,
  fail: Failure,
): Promise<Buffer> {
  const maxStdout = options.maxStdoutBytes ?? 256 * 1024 * 1024;
  const signals = [...ambientSignals(), ...(options.signal ? [options.signal] : [])];
  // Cancelled work starts nothing more: not even a process that would be killed at once.
  if (signals.some((signal) => signal.aborted)) return Promise.reject(fail(null, '(aborted)', false, ''));
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout stops helpers (remote helpers, index-pack) too; started
    // by the launcher, which writes the input and the secret.
    const { child, stop: stopGroup } = launchGroup(command, args, {
      cwd: options.cwd,
      env: options.env,
      input: options.input,
      secret: options.secret,
    });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrTail = '';
    let pending = '';
    let timedOut = false;
    let overflow = false;
    let aborted = false;
    let readerError: unknown;
    const timer = setTimeout(() => {
      timedOut = true;
      stopGroup();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      stopGroup();
    };
    for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      if (options.onStdout) {
        if (readerError !== undefined) return;
        try {
          options.onStdout(chunk);
        } catch (error) {
          readerError = error;
          stopGroup();
        }
        return;
      }
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdout) {
        overflow = true;
        stopGroup();
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      const text = redactCredentials(chunk.toString('utf8'));
      stderrTail = (stderrTail + text).slice(-FAILURE_TAIL_CHARS);
      if (!options.onProgress) return;
      pending += text;
      const lines = pending.split(/[\r\n]/);
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') options.onProgress(line);
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
      if (readerError !== undefined) return reject(readerError);
      if (code === 0 && !timedOut && !overflow && !aborted) return resolve(Buffer.concat(stdout));
      const why = overflow
        ? `${stderrTail}\n(output over ${maxStdout} bytes)`
        : aborted
          ? `${stderrTail}\n(aborted)`
          : stderrTail;
      const output = Buffer.concat(stdout);
      const tail = redactCredentials(output.subarray(-FAILURE_TAIL_CHARS).toString('utf8'));
      reject(fail(code, why, timedOut, tail));
    });
  });
}
