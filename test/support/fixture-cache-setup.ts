import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURE_CACHE_ENV } from '#local/fixture-cache';

/**
 * One fixture cache for the whole run (`lib/local/fixture-cache.ts`): a directory named in the
 * environment the test workers inherit, removed by the last project's teardown (Vitest runs a
 * global setup once per project that lists it, so the count is kept on `globalThis`).
 */
const KEY = Symbol.for('oauth-import-service.fixture-cache');
const registry = globalThis as { [KEY]?: { dir: string; users: number } };

export default async function setup(): Promise<() => Promise<void>> {
  let shared = registry[KEY];
  if (!shared) {
    shared = { dir: await mkdtemp(join(tmpdir(), 'fixture-cache-run-')), users: 0 };
    registry[KEY] = shared;
    process.env[FIXTURE_CACHE_ENV] = shared.dir;
  }
  shared.users += 1;
  const current = shared;
  return async () => {
    current.users -= 1;
    if (current.users > 0) return;
    if (registry[KEY] === current) delete registry[KEY];
    delete process.env[FIXTURE_CACHE_ENV];
    await rm(current.dir, { recursive: true, force: true });
  };
}
