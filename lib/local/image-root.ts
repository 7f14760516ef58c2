/**
 * The worker image's root file system on this machine, without Docker: `scripts/image-root.sh`
 * builds it from `lib/cdk/worker/Dockerfile`'s own package lists, Node.js and runtime interface
 * client into `.data/image-root/` (cached while those are unchanged), with `image.json` beside it:
 * the final stage's ENV, WORKDIR and ENTRYPOINT, and the versions of the tools it ships.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const SCRIPT = fileURLToPath(new URL('../../scripts/image-root.sh', import.meta.url));
const IMAGE_ROOT_DIR = fileURLToPath(new URL('../../.data/image-root/', import.meta.url));

export interface ImageRoot {
  /** The root file system (read-only to everything that runs in it). */
  readonly root: string;
  /** The image's environment (its ENV lines over the base image's). */
  readonly env: Readonly<Record<string, string>>;
  readonly workdir: string;
  readonly entrypoint: readonly string[];
  readonly versions: Readonly<Record<string, unknown>>;
}

/**
 * The worker image's root, built first if it is missing or stale (minutes the first time, the
 * script's progress on stderr; a few milliseconds once cached). Concurrent callers wait on the
 * script's lock, and the later ones find the root built.
 */
export async function workerImageRoot(): Promise<ImageRoot> {
  const building = promisify(execFile)('bash', [SCRIPT], { maxBuffer: 16 << 20, timeout: 1_200_000 });
  building.child.stderr?.pipe(process.stderr);
  await building;
  const manifest = JSON.parse(await readFile(join(IMAGE_ROOT_DIR, 'image.json'), 'utf8')) as Omit<
    ImageRoot,
    'root'
  > & { rootfs: string };
  return {
    root: join(IMAGE_ROOT_DIR, manifest.rootfs),
    env: manifest.env,
    workdir: manifest.workdir,
    entrypoint: manifest.entrypoint,
    versions: manifest.versions,
  };
}
