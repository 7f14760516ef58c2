import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ImageRoot, workerImageRoot } from '#local/image-root';
import { type LambdaFunction, lambdaFunction } from '#local/lambda-functions';
import { LAMBDA_USER } from '#test/as-deployed';

/**
 * The Lambda Runtime API stand-in against the real runtime interface client of the worker image
 * (`aws-lambda-ric` on the image's Node.js 22), in the conditions Lambda gives an image function:
 * its user, a read-only root, a 512 MB `/tmp`, and the environment the image sets (no HOME of
 * Lambda's own).
 */

const HANDLERS = `
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
class OriginUnreachable extends Error { name = 'OriginUnreachable'; }
export const where = async () => {
  let rootWritable = true;
  try { writeFileSync('/probe', 'x'); } catch (error) { rootWritable = error.code; }
  mkdirSync('/tmp/scratch', { recursive: true });
  writeFileSync('/tmp/scratch/file', 'x');
  return { uid: process.getuid(), gid: process.getgid(), node: process.version, home: homedir(), rootWritable };
};
export const echo = async (event, context) => ({ event, remaining: context.getRemainingTimeInMillis() > 0 });
export const fails = async () => { throw new OriginUnreachable('no route to the origin'); };
export const huge = async () => 'x'.repeat(7 * 1024 * 1024);
export const slow = () => new Promise((resolve) => setTimeout(resolve, 60_000));
export const small = async () => Buffer.alloc(16 * 1024 * 1024, 1).length;
// 512 MiB, every page written: over any memory size these tests give.
export const hog = async () => {
  const kept = [];
  for (let i = 0; i < 64; i++) kept.push(Buffer.alloc(8 * 1024 * 1024, 1));
  return kept.length;
};
// The same in a child the function waits for, answering whatever became of it.
export const hogChild = async () => {
  const { spawnSync } = await import('node:child_process');
  const child = spawnSync(process.execPath, ['-e', 'console.log(Buffer.alloc(512 * 1024 * 1024, 1).length)']);
  return { status: child.status, signal: child.signal };
};
`;

let image: ImageRoot;
let task: string;
const started: LambdaFunction[] = [];

function fn(handler: string, timeoutSeconds = 30, memoryMiB = 128): LambdaFunction {
  const created = lambdaFunction({
    name: `runtime-test-${handler}`,
    argv: [...image.entrypoint, `handlers.${handler}`],
    timeoutSeconds,
    memoryMiB,
    env: { ...image.env, AWS_REGION: 'us-east-1' },
    sandbox: { root: image.root, workdir: image.workdir, taskDir: task, ...LAMBDA_USER, tmpMiB: 512 },
    logDir: task,
  });
  started.push(created);
  return created;
}

beforeAll(async () => {
  image = await workerImageRoot();
  task = await mkdtemp(join(tmpdir(), 'runtime-test-'));
  await chmod(task, 0o755);
  await writeFile(join(task, 'handlers.mjs'), HANDLERS, { mode: 0o644 });
});

afterAll(async () => {
  await Promise.all(started.map((started) => started.stop()));
  await rm(task, { recursive: true, force: true });
});

describe('a function under aws-lambda-ric, behind the Runtime API stand-in', () => {
  it('runs as Lambda runs an image: its user, Node.js 22, a read-only root, a writable /tmp, a home', async () => {
    expect(await fn('where').invoke({})).toEqual({
      uid: LAMBDA_USER.uid,
      gid: LAMBDA_USER.gid,
      node: expect.stringMatching(/^v22\./),
      home: image.env.HOME,
      rootWritable: 'EROFS',
    });
  });

  it('hands the event over and returns the result, invocation after invocation in one environment', async () => {
    const echo = fn('echo');
    expect(await echo.invoke({ n: 1 })).toEqual({ event: { n: 1 }, remaining: true });
    expect(await echo.invoke({ n: 2 })).toEqual({ event: { n: 2 }, remaining: true });
    expect(echo.logFiles).toHaveLength(1);
  });

  it('reports a thrown error by its name, which is what Retry and Catch match', async () => {
    await expect(fn('fails').invoke({})).rejects.toMatchObject({
      name: 'OriginUnreachable',
      message: 'no route to the origin',
    });
  });

  it('fails an init error with the client’s error type, and every later invocation too', async () => {
    const missing = fn('nowhere');
    await expect(missing.invoke({})).rejects.toMatchObject({ name: 'Runtime.HandlerNotFound' });
    await expect(missing.invoke({})).rejects.toMatchObject({ name: 'Runtime.HandlerNotFound' });
  });

  it('refuses a result over 6 MB', async () => {
    await expect(fn('huge').invoke({})).rejects.toMatchObject({ name: 'Function.ResponseSizeTooLarge' });
  });

  it('ends an invocation that outlives the timeout, and the next one starts a new environment', async () => {
    const slow = fn('slow', 2);
    await expect(slow.invoke({})).rejects.toMatchObject({ name: 'Sandbox.Timedout' });
    await expect(slow.invoke({})).rejects.toMatchObject({ name: 'Sandbox.Timedout' });
    expect(slow.logFiles).toHaveLength(2);
  }, 30_000);

  it('ends an environment that goes over its memory size, reported as Lambda does: Runtime.OutOfMemory', async () => {
    const hog = fn('hog');
    const outOfMemory = {
      name: 'Runtime.OutOfMemory',
      message: 'Error: Runtime exited with error: signal: killed',
    };
    await expect(hog.invoke({})).rejects.toMatchObject(outOfMemory);
    await expect(hog.invoke({})).rejects.toMatchObject(outOfMemory);
    expect(hog.logFiles).toHaveLength(2);
    // The same work within a memory size that holds it.
    expect(await fn('hog', 30, 1024).invoke({})).toBe(64);
  }, 60_000);

  it('ends it too when the process over it is a child the function outlives', async () => {
    await expect(fn('hogChild').invoke({})).rejects.toMatchObject({ name: 'Runtime.OutOfMemory' });
    expect(await fn('hogChild', 30, 1024).invoke({})).toEqual({ status: 0, signal: null });
  }, 60_000);

  it('runs a function well within its memory size, invocation after invocation', async () => {
    const small = fn('small');
    expect(await small.invoke({})).toBe(16 * 1024 * 1024);
    expect(await small.invoke({})).toBe(16 * 1024 * 1024);
    expect(small.logFiles).toHaveLength(1);
  });
});
