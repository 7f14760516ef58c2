/**
 * The revision map of an import: each origin revision the import converted (a Subversion revision
 * number, a Mercurial changeset id, a TFVC changeset id, a Git commit id) and the commit it was
 * published as. How it is stored (pages in origin order, lookup buckets by a hash) is the data
 * layer's (`data/imports/revision-map.ts`). See docs/decisions.md "The revision map".
 */
export interface RevisionEntry {
  readonly originRevision: string;
  readonly commit: string;
}

/**
 * Whether text can name an origin revision at all: a number (Subversion, TFVC) or hex (Mercurial,
 * Git). Anything else cannot be in a map, and is answered 404 without a read.
 */
export const isOriginRevisionName = (text: string): boolean =>
  /^(?:[0-9]{1,12}|[0-9a-f]{40}|[0-9a-f]{64})$/.test(text);

/** A stored map as its writer last left it: the generation readers follow and its number of entries. */
export interface StoredRevisionMap {
  readonly generation: number;
  readonly total: number;
  /** Lookup buckets the generation was written with (fixed for its life); absent in older records. */
  readonly buckets?: number;
  /**
   * The origin revisions found in the map's header instead of the buckets (the tail: a sync's few
   * new ones). Absent in older records.
   */
  readonly tail?: readonly string[];
}

/** How a new list of entries differs from the stored one, when it only adds entries. */
export interface RevisionChange {
  /** The first position where the lists differ (the stored length when it is a prefix). */
  readonly firstChange: number;
  /** The entries the stored list lacks, in the new list's order. */
  readonly added: readonly RevisionEntry[];
}

/**
 * Whether `entries` hold every entry of `stored`, each with the same commit, and what they add
 * (a sync of a Git origin may place new commits before old ones: its order is `--topo-order`'s);
 * undefined when an entry is gone or now names another commit.
 */
export function revisionChange(
  stored: readonly RevisionEntry[],
  entries: readonly RevisionEntry[],
): RevisionChange | undefined {
  if (stored.length > entries.length) return undefined;
  let firstChange = 0;
  while (
    firstChange < stored.length &&
    entries[firstChange]?.originRevision === stored[firstChange]?.originRevision &&
    entries[firstChange]?.commit === stored[firstChange]?.commit
  )
    firstChange += 1;
  const before = new Map(stored.slice(firstChange).map((entry) => [entry.originRevision, entry.commit]));
  const added: RevisionEntry[] = [];
  for (const entry of entries.slice(firstChange)) {
    const commit = before.get(entry.originRevision);
    if (commit === undefined) added.push(entry);
    else if (commit !== entry.commit) return undefined;
    else before.delete(entry.originRevision);
  }
  return before.size === 0 ? { firstChange, added } : undefined;
}
