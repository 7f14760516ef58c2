import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export interface ToolCalls {
  /** Each call so far: the tool's name, then its arguments. */
  calls(): Promise<string[][]>;
  /** Puts PATH back and removes the recorders. */
  restore(): Promise<void>;
}

/**
 * Records every call the service makes to the named tools while they run for real: a directory of
 * recorders put first on this process's PATH (which the worker's tools are looked up on, locally),
 * each appending its arguments to a log, then `exec`ing the real binary found on PATH before.
 */
export async function recordToolCalls(tools: readonly string[]): Promise<ToolCalls> {
  const dir = await mkdtemp(join(tmpdir(), 'tool-calls-'));
  const log = join(dir, 'calls.log');
  await writeFile(log, '');
  const before = process.env.PATH ?? '';
  for (const tool of tools) {
    const real = (await exec('sh', ['-c', `command -v ${tool}`], { env: { PATH: before } })).stdout.trim();
    const script = join(dir, tool);
    await writeFile(
      script,
      `#!/bin/sh\n{ printf '%s\\037' '${tool}' "$@"; printf '\\036'; } >> '${log}'\nexec '${real}' "$@"\n`,
    );
    await chmod(script, 0o755);
  }
  process.env.PATH = `${dir}:${before}`;
  return {
    async calls() {
      const text = await readFile(log, 'utf8');
      return text
        .split('\u001e')
        .filter(Boolean)
        .map((call) => call.split('\u001f').slice(0, -1));
    },
    async restore() {
      process.env.PATH = before;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
