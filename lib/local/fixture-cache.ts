import { rmSync } from 'node:fs';
import { access, cp, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Deterministic fixture repositories (fixed authors, dates and contents, so the same bytes and
 * ids every time) built once and copied for each use. Building the Mercurial fixture starts
 * fifteen `hg` processes, several seconds under load; a copy takes milliseconds and is the very
 * same repository. The test run's global setup names a directory for the run in
 * `FIXTURE_CACHE_ENV`, so that every test file of the run shares one build; without it the cache
 * lasts as long as this process.
 */
export const FIXTURE_CACHE_ENV = 'LOCAL_FIXTURE_CACHE_DIR';

const builds = new Map<string, Promise<string>>();
let processRoot: Promise<string> | undefined;

function cacheRoot(): Promise<string> {
  const shared = process.env[FIXTURE_CACHE_ENV];
  if (shared) return mkdir(shared, { recursive: true }).then(() => shared);
  processRoot ??= mkdtemp(join(tmpdir(), 'fixture-cache-')).then((root) => {
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    return root;
  });
  return processRoot;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** Builds `key` unless a process of this run already has; the finished build appears at once (a rename). */
async function builtOnce(key: string, build: (dir: string) => Promise<void>): Promise<string> {
  const root = await cacheRoot();
  const done = join(root, key);
  if (await exists(done)) return done;
  const staging = await mkdtemp(join(root, `${key}.building-`));
  try {
    await build(join(staging, key));
    await rename(join(staging, key), done).catch(async (error: unknown) => {
      // Another process of the run finished the same build first: theirs is identical.
      if (!(await exists(done))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return done;
}

/** Makes `dest` a copy of the fixture `key`, which `build` makes in the directory it is given. */
export async function copyOfFixture(
  key: string,
  build: (dir: string) => Promise<void>,
  dest: string,
): Promise<void> {
  let built = builds.get(key);
  if (!built) {
    built = builtOnce(key, build);
    builds.set(key, built);
    built.catch(() => builds.delete(key));
  }
  await cp(await built, dest, { recursive: true, preserveTimestamps: true });
}
