import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asImageFunction, asZipFunction } from '#local/zip-runtime';
import { prepareHome, runGit } from '#vcs/git-command';
import { runHg } from '#vcs/mercurial/command';
import { runSvn } from '#vcs/subversion/command';

/**
 * The local stand-ins run each zip function's invocation as the Node.js runtime would: with no
 * git, hg or svn to spawn (the local API Gateway and the zip workflow tasks run inside
 * `asZipFunction`). The very runners the service uses fail there as they would deployed, and work
 * where AWS has the tools (the worker image, the Git front end).
 */
let home: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'zip-runtime-'));
  await prepareHome(home, []);
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const tools = {
  git: () => runGit(['--version'], { cwd: home, home, transport: 'local', timeoutMs: 10_000 }),
  hg: () => runHg(['--version', '--quiet'], { cwd: home, home, timeoutMs: 10_000 }),
  svn: () => runSvn('svnadmin', ['--version', '--quiet'], { cwd: home, home, timeoutMs: 10_000 }),
};

describe('tools in a zip function and in the worker image, locally', () => {
  it.each(Object.entries(tools))(
    'a zip function cannot spawn %s (ENOENT, as on the Node.js runtime)',
    async (_name, run) => {
      await expect(asZipFunction(run)).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it.each(Object.entries(tools))('the worker image can spawn %s', async (_name, run) => {
    await expect(asImageFunction(run)).resolves.toBeInstanceOf(Buffer);
  });

  it('keeps the zip function\u2019s PATH across the awaits of one invocation, and only there', async () => {
    await asZipFunction(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      await expect(tools.git()).rejects.toMatchObject({ code: 'ENOENT' });
    });
    await expect(tools.git()).resolves.toBeInstanceOf(Buffer);
  });
});
