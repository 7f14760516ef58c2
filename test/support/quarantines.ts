import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** receive-pack's quarantine directories in a hosted repository (none when it has no `objects/`). */
export const quarantines = async (hosted: string): Promise<string[]> =>
  (await readdir(join(hosted, 'objects')).catch(() => [])).filter((name) =>
    name.startsWith('tmp_objdir-incoming-'),
  );

/** The bytes in them now (files that go meanwhile are not counted). */
export async function quarantineBytes(hosted: string): Promise<number> {
  let bytes = 0;
  for (const directory of await quarantines(hosted)) {
    const root = join(hosted, 'objects', directory);
    const files = await readdir(root, { recursive: true }).catch(() => []);
    for (const file of files) bytes += (await stat(join(root, file)).catch(() => undefined))?.size ?? 0;
  }
  return bytes;
}
