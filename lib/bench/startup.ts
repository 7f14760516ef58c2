import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Milliseconds from spawning `tsx bin/local.ts` (what `npm start` runs after setup) until it prints
 * "Ready": DynamoDB Local's JVM, the table, the Step Functions endpoint and every handler loaded.
 */
export async function timeToReady(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-start-'));
  const started = performance.now();
  const child = spawn(join(ROOT, 'node_modules/.bin/tsx'), ['bin/local.ts', '--in-memory'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', LOCAL_ENDPOINTS_FILE: join(dir, 'local.json') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    return await new Promise<number>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`not ready after 60 s:\n${output}`)), 60_000);
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk;
        if (/Ready in/.test(output)) {
          clearTimeout(timer);
          resolve(performance.now() - started);
        }
      });
      child.on('exit', (code) => reject(new Error(`bin/local.ts exited with ${code}:\n${output}`)));
    });
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
}
