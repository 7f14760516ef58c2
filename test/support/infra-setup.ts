import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Everything `cdk synth` reads: the app, the functions it bundles, the ASL files, the toolchain. */
const INPUT_DIRS = ['bin', 'lib', 'functions', 'statemachines'];
const INPUT_FILES = ['cdk.json', 'package.json', 'package-lock.json', 'tsconfig.json'];
/** One cache per checkout, so that worktrees never replace each other's assembly. */
const CACHE = join(
  tmpdir(),
  'oauth-import-service-cdk-out',
  createHash('sha256').update(ROOT).digest('hex').slice(0, 12),
);

function inputsHash(): string {
  const hash = createHash('sha256');
  const files = [
    ...INPUT_FILES,
    ...INPUT_DIRS.flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name).slice(ROOT.length)),
    ),
  ].sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(ROOT, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The one bundling synth of the infra project: runs the real CLI, `cdk synth`, as a user would,
 * offline and with no AWS credentials or configuration, and provides the cloud assembly directory
 * as `cdkOut` (template and bundled assets) to every infra test that needs bundles. Bundling all
 * functions is the slow part of the infra tests, so it happens once per run, and not at all while
 * the inputs are unchanged: the assembly is kept in the temp directory under a hash of every file
 * synthesis reads (a new hash replaces the old assembly).
 */
export default async function setup(project: TestProject): Promise<void> {
  const out = join(CACHE, inputsHash());
  if (!existsSync(join(out, 'manifest.json'))) {
    await mkdir(CACHE, { recursive: true });
    const building = await mkdtemp(join(CACHE, 'building-'));
    const home = await mkdtemp(join(tmpdir(), 'no-aws-home-'));
    // Only what a shell needs: no AWS_* variables, and a HOME without ~/.aws.
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    try {
      await promisify(execFile)(
        join(ROOT, 'node_modules/.bin/cdk'),
        ['synth', '--quiet', '--output', building],
        { cwd: ROOT, env, timeout: 900_000, maxBuffer: 64 * 1024 * 1024 },
      );
      for (const old of readdirSync(CACHE)) {
        if (!old.startsWith('building-')) await rm(join(CACHE, old), { recursive: true, force: true });
      }
      await rename(building, out).catch((error: unknown) => {
        // A concurrent run of the same checkout got there first with the same inputs.
        if (!existsSync(join(out, 'manifest.json'))) throw error;
      });
    } finally {
      await rm(building, { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
    }
  }
  project.provide('cdkOut', out);
}
