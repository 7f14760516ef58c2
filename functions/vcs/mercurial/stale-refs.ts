/**
 * A sync writes the refs into the raw.git of the import before it: branches, bookmarks, heads and
 * tags the origin no longer has (a deleted bookmark, a head merged or stripped, a tag removed) go,
 * so the refs are exactly those a fresh import of the origin writes.
 */
export type LocalGit = (args: readonly string[], input?: string) => Promise<Buffer>;

/** Deletes every branch and tag of the repository but `keep`, in one `update-ref` transaction. */
export async function dropStaleRefs(local: LocalGit, keep: ReadonlySet<string>): Promise<void> {
  const present = (await local(['for-each-ref', '--format=%(refname)', 'refs/heads/', 'refs/tags/']))
    .toString()
    .split('\n')
    .filter((ref) => ref !== '' && !keep.has(ref));
  if (present.length === 0) return;
  await local(['update-ref', '--stdin'], present.map((ref) => `delete ${ref}\n`).join(''));
}
