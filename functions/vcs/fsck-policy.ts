/**
 * Which of git's object checks do not refuse a history. Imports (`fetch.fsckObjects` as objects
 * arrive, `git fsck --strict` otherwise) and pushes (`receive.fsckObjects`) refuse everything git
 * flags under `transfer.fsckObjects`, except what real, harmless histories carry: zero-padded tree
 * modes (`040000`), which some early Git tools wrote and GitHub accepts.
 */
const NOT_REFUSED = ['zeroPaddedFilemode'] as const;

/** Config pairs for `git fsck` (`fsck`), a fetch (`fetch.fsck`) or receive-pack (`receive.fsck`). */
export const fsckLeniency = (
  section: 'fsck' | 'fetch.fsck' | 'receive.fsck',
): readonly (readonly [string, string])[] => NOT_REFUSED.map((id) => [`${section}.${id}`, 'ignore'] as const);
