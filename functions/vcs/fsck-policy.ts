/**
 * Which of git's object checks do not refuse a history. Imports (`fetch.fsckObjects` as objects
 * arrive, `git fsck --strict` otherwise) and pushes (`receive.fsckObjects`) refuse everything git
 * flags under `transfer.fsckObjects`, except what real, harmless histories carry: zero-padded tree
 * modes (`040000`), which some early Git tools wrote and GitHub accepts.
 *
 * A raw history may also hold tree entries the history step leaves out (`DROPPED_IN_HISTORY`: a
 * `.`, `..` or `.git` entry in any spelling, or a name holding `/`, `#domain/unstorable-paths`): the whole check of a raw
 * repository (`checkHistory` with `dropping`) only warns of them, and the history step drops them
 * and checks what it wrote with no leniency for them. A push never accepts them. (The history step
 * drops `.hg` entries too, which git's checks do not flag: `hg-metadata-scan.ts` finds them.)
 */
const NOT_REFUSED = ['zeroPaddedFilemode'] as const;

/** git's ids of the tree entries the history step drops (`history-drop.ts`). */
export const DROPPED_IN_HISTORY = ['hasDot', 'hasDotdot', 'hasDotgit', 'fullPathname'] as const;

/** Config pairs for `git fsck` (`fsck`), a fetch (`fetch.fsck`) or receive-pack (`receive.fsck`). */
export const fsckLeniency = (
  section: 'fsck' | 'fetch.fsck' | 'receive.fsck',
): readonly (readonly [string, string])[] => NOT_REFUSED.map((id) => [`${section}.${id}`, 'ignore'] as const);

/** Whether a fetch's object checks refused only an entry the history step drops. */
export const refusedOnlyDroppable = (stderr: string): boolean => {
  const ids = [...stderr.matchAll(/^error: object [0-9a-f]{40,64}: (\w+): /gm)].map((match) => match[1]);
  return ids.length > 0 && ids.every((id) => (DROPPED_IN_HISTORY as readonly string[]).includes(id ?? ''));
};
