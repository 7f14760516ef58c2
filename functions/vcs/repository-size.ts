/**
 * A hosted repository's `size`, one definition for what a push (the Git front end) and an import
 * (publish) report: loose and packed objects in KiB, GitHub's unit (`git count-objects -v`: size
 * + size-pack), and what its quarantine directories hold (`quarantine.ts`). Git LFS objects are
 * not counted. Each caller runs `git count-objects -v` its own way (the front end's environment,
 * the import's job) and hands its output here.
 */

import { quarantinedKiB } from './quarantine.ts';

export async function repositorySizeKiB(path: string, countObjectsOutput: string): Promise<number> {
  const field = (name: string) =>
    Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(countObjectsOutput)?.[1] ?? 0);
  return field('size') + field('size-pack') + (await quarantinedKiB(path));
}
