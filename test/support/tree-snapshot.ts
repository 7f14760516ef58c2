import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Every file and link under `dir`, to compare an imported tree with the origin's own export:
 * path → `file <executable> <base64>` or `link <target>` (directories are implied by paths).
 */
export async function snapshot(
  dir: string,
  prefix = '',
  into = new Map<string, string>(),
): Promise<Map<string, string>> {
  for (const name of await readdir(dir)) {
    const full = join(dir, name);
    const stat = await lstat(full);
    if (stat.isDirectory()) await snapshot(full, `${prefix}${name}/`, into);
    else if (stat.isSymbolicLink()) into.set(prefix + name, `link ${await readlink(full)}`);
    else
      into.set(
        prefix + name,
        `file ${(stat.mode & 0o111) !== 0} ${(await readFile(full)).toString('base64')}`,
      );
  }
  return into;
}
