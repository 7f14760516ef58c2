import { buildWorkerImageRoot } from '#local/image-root';

/**
 * The as-deployed tests' one slow step, before any of them: the worker image's root file system,
 * built from the Dockerfile's own lists when missing or stale (see `scripts/image-root.sh`).
 */
export default async function setup(): Promise<void> {
  await buildWorkerImageRoot();
}
