import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

export interface BinResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs an entry point of `bin/` as `npm run` does (tsx, from the project root) in a separate
 * process, without blocking this one: a local stack in the test's process keeps serving it.
 */
export async function runBin(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<BinResult> {
  try {
    const { stdout, stderr } = await run(TSX, [`bin/${script}`, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as BinResult;
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}
