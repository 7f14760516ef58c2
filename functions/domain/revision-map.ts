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
   * How many of the first entries the buckets hold; the rest (the tail, a sync's few) are found in
   * the pages. Absent in older records (then all of them).
   */
  readonly bucketed?: number;
}

/** Whether `entries` begin with exactly `stored` (a sync that only added revisions at the end). */
export function extendsRevisions(
  stored: readonly RevisionEntry[],
  entries: readonly RevisionEntry[],
): boolean {
  if (stored.length > entries.length) return false;
  return stored.every(
    (entry, index) =>
      entries[index]?.originRevision === entry.originRevision && entries[index]?.commit === entry.commit,
  );
}
