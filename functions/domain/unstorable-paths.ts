/**
 * Paths Git cannot or must not store (issue 28): an import leaves them out of the tree and lists
 * each one in its report (`unstorable_paths`), instead of failing the whole history on it.
 *
 * The rules are git's own tree checks (`git fsck --strict`: `hasDot`, `hasDotdot`, `hasDotgit`
 * with its HFS and NTFS spellings, `emptyName`, `fullPathname`), plus what no checkout may write:
 * an absolute path, a NUL, and another version control system's metadata folder (`.hg`, which
 * Mercurial itself refuses to check out, in the same spellings). A converter written in another
 * language gets the component patterns from here (`UNSTORABLE_COMPONENT_PATTERNS`).
 */

/** Why a path is left out: the `reason` the report shows. */
export type UnstorableReason =
  | 'absolute'
  | 'nul'
  | 'empty_component'
  | 'slash_in_name'
  | 'dot_component'
  | 'git_metadata'
  | 'hg_metadata'
  | 'beneath_file';

/**
 * Code points HFS+ ignores in names, so `.g\u200cit` is `.git` on a Mac (git's `is_hfs_dotgit`).
 * A pattern source for JavaScript's and Python's regular expressions alike.
 */
export const HFS_IGNORED_SOURCE = '[\\u200c-\\u200f\\u202a-\\u202e\\u206a-\\u206f\\ufeff]';

/**
 * A name that is `name` on some file system, once HFS's ignored code points are removed and it is
 * lower-cased: NTFS's trailing dots and spaces, its alternate streams (`.git::$INDEX_ALLOCATION`)
 * and its 8.3 short name (`git~1`), as git's `is_ntfs_dotgit`.
 */
const spellings = (name: string) => `^(?:\\.${name}|${name}~1)(?:[. ]*$|:)`;

/** Component patterns (applied after removing `HFS_IGNORED_SOURCE` and lower-casing), by reason. */
export const UNSTORABLE_COMPONENT_PATTERNS = {
  git_metadata: spellings('git'),
  hg_metadata: spellings('hg'),
} as const;

const HFS_IGNORED = new RegExp(HFS_IGNORED_SOURCE, 'gu');
const GIT_METADATA = new RegExp(UNSTORABLE_COMPONENT_PATTERNS.git_metadata, 'u');
const HG_METADATA = new RegExp(UNSTORABLE_COMPONENT_PATTERNS.hg_metadata, 'u');

/** A tree entry name git's checks refuse as `.git` (`hasDotgit`), in any of its spellings. */
export const isDotGitName = (name: string): boolean =>
  GIT_METADATA.test(name.replace(HFS_IGNORED, '').toLowerCase());

/** Why one path component (a tree entry's name) cannot be stored, or undefined when it can. */
export function componentReason(name: string): UnstorableReason | undefined {
  if (name === '') return 'empty_component';
  if (name.includes('/')) return 'slash_in_name';
  if (name === '.' || name === '..') return 'dot_component';
  const folded = name.replace(HFS_IGNORED, '').toLowerCase();
  if (GIT_METADATA.test(folded)) return 'git_metadata';
  if (HG_METADATA.test(folded)) return 'hg_metadata';
  return undefined;
}

/** Why a repository-relative path (`/`-separated) cannot be stored, or undefined when it can. */
export function unstorableReason(path: string): UnstorableReason | undefined {
  if (path.includes('\0')) return 'nul';
  if (path.startsWith('/')) return 'absolute';
  for (const name of path.split('/')) {
    const reason = componentReason(name);
    if (reason !== undefined) return reason;
  }
  return undefined;
}
