import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

export interface AdminResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly json: unknown;
}

/** Runs the real admin CLI (`bin/admin.ts`) as a separate process against a stack's endpoints file. */
export async function admin(
  endpointsFile: string,
  ...rest: Array<string | { env: Record<string, string> }>
): Promise<AdminResult> {
  const extraEnv = rest.find((item) => typeof item !== 'string')?.env ?? {};
  const args = rest.filter((item): item is string => typeof item === 'string');
  try {
    const { stdout, stderr } = await run(TSX, ['bin/admin.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, LOCAL_ENDPOINTS_FILE: endpointsFile, ...extraEnv },
    });
    return { code: 0, stdout, stderr, json: JSON.parse(stdout) };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr, json: undefined };
  }
}
