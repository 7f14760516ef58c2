import { readFileSync } from 'node:fs';
import { IgnoreMode, SymlinkFollowMode } from 'aws-cdk-lib';
import { type DockerImageAssetOptions, Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { PROJECT_ROOT, WORKER_DOCKERFILE, WORKER_DOCKERIGNORE } from './paths.ts';

/** The build context's filter, read from the file Docker itself reads (one list, two readers). */
function contextExcludes(): string[] {
  return readFileSync(WORKER_DOCKERIGNORE, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The worker image's build context: the repository root, filtered by `Dockerfile.dockerignore`. */
export const WORKER_IMAGE_CONTEXT = PROJECT_ROOT;

/**
 * How the one worker image (`lib/cdk/worker/Dockerfile`) is built, for the import workflow's Git
 * steps (Lambda) and the Git front end (ECS) alike. Identical options give an identical asset
 * hash, so the cloud assembly holds one image and `cdk deploy` builds and pushes it once.
 */
export function workerImageAsset(): DockerImageAssetOptions {
  return {
    file: WORKER_DOCKERFILE.slice(PROJECT_ROOT.length + 1),
    // The functions and the front end run on Graviton.
    platform: Platform.LINUX_ARM64,
    exclude: contextExcludes(),
    ignoreMode: IgnoreMode.DOCKER,
    // node_modules may be a link out of the checkout; the image installs its own.
    followSymlinks: SymlinkFollowMode.NEVER,
  };
}
