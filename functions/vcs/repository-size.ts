/**
 * A hosted repository's `size`, one definition for what a push (the Git front end) and an import
 * (publish) report: loose and packed objects in KiB, GitHub's unit (`git count-objects -v`: size
 * + size-pack, read by `object-database.ts`), and what its quarantine directories hold
 * (`quarantine.ts`). Git LFS objects are not counted.
 */
import { objectDatabase } from './object-database.ts';
import { quarantinedKiB } from './quarantine.ts';

export async function repositorySizeKiB(path: string): Promise<number> {
  const [objects, quarantined] = await Promise.all([objectDatabase(path), quarantinedKiB(path)]);
  return objects.looseKiB + objects.packKiB + quarantined;
}
