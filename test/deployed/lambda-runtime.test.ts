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
`;

let image: ImageRoot;
let task: string;
const started: LambdaFunction[] = [];

function fn(handler: string, timeoutSeconds = 30): LambdaFunction {
  const created = lambdaFunction({
    name: `runtime-test-${handler}`,
    argv: [...image.entrypoint, `handlers.${handler}`],
    timeoutSeconds,
    memoryMiB: 128,
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
});
