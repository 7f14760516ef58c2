/**
 * The Git front end as its container runs it: `functions/git-server/main.ts` in a Node process of
 * its own, configured like the handlers (this process's environment, the local stack's), with its
 * own address as the web origin so that LFS actions point back at it. For the e2e tests and the
 * benchmark, which watch its memory and its child processes from outside.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ENV } from '#shared/config';
import { freePort } from './ports.ts';

const MAIN = fileURLToPath(new URL('../../functions/git-server/main.ts', import.meta.url));

export interface FrontEndOptions {
  /**
   * A command line the front end runs under (`unshare --pid …`, `tini --`): `process` is then that
   * command's, and `growthDuring` measures it rather than the front end.
   */
  readonly under?: readonly string[];
  /** Variables set over this process's environment (lowered limits, for instance). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface FrontEndProcess {
  readonly process: ChildProcess;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** How much its resident memory grew at its peak while `transfer` ran (Linux `/proc`). */
  growthDuring(transfer: () => Promise<unknown>): Promise<number>;
}

/** Starts the front end on a free port of 127.0.0.1 and waits for its health check. */
export async function startFrontEndProcess(options: FrontEndOptions = {}): Promise<FrontEndProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const line = [...(options.under ?? []), process.execPath, '--import', 'tsx', MAIN];
  const child = spawn(line[0] as string, line.slice(1), {
    env: {
      ...process.env,
      ...options.env,
      PORT: String(port),
      LISTEN_ADDRESS: '127.0.0.1',
      [ENV.authUrl]: url,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let ready = false; !ready; await new Promise((resolve) => setTimeout(resolve, 100))) {
    if (child.exitCode !== null) throw new Error(`the front end exited with ${child.exitCode}`);
    ready = await fetch(`${url}/_health`).then(
      (response) => response.status === 200,
      () => false,
    );
  }
  const pid = child.pid as number;
  return {
    process: child,
    url,
    port,
    async growthDuring(transfer) {
      // Linux `clear_refs` 5 resets the peak (VmHWM) to the current resident size.
      await writeFile(`/proc/${pid}/clear_refs`, '5');
      const before = await memory(pid);
      await transfer();
      return (await memory(pid)).peak - before.rss;
    },
  };
}

/** Resident memory of a process: now, and its peak since the last reset. */
async function memory(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}
