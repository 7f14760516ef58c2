import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';

/**
 * A git plumbing command in `cwd` (object and tree making in tests), with `home` as its HOME and
 * nothing else of the machine's configuration; it must succeed. What it printed, trimmed.
 */
export function gitPlumbing(cwd: string, home: string, args: string[], input?: string): string {
  const run = spawnSync('git', args, {
    cwd,
    input,
    env: { PATH: process.env.PATH ?? '', HOME: home, LC_ALL: 'C' },
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim();
}
