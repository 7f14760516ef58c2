/**
 * The revision map of an import: each origin revision the import converted (a Subversion revision
 * number, a Mercurial changeset id, a TFVC changeset id, a Git commit id) and the commit it was
 * published as. Stored in pages of `REVISION_PAGE` entries in origin order (a page of the API is
 * at most two stored pages) and, for finding one entry, in `lookupBuckets(total)` buckets by a
 * hash of the origin revision. See docs/decisions.md "The revision map".
 */
export interface RevisionEntry {
  readonly originRevision: string;
  readonly commit: string;
}

/** Entries per stored page: the API's largest `per_page`, so one answer reads at most two pages. */
export const REVISION_PAGE = 100;

/** Entries per lookup bucket, on average. */
const BUCKET_ENTRIES = 100;

/** How many lookup buckets a map of `total` entries is spread over (fixed when it is written). */
export const lookupBuckets = (total: number): number => Math.max(1, Math.ceil(total / BUCKET_ENTRIES));

/** The stored pages (0-based) that hold entries `start` … `start + count − 1`. */
export function storedPagesFor(start: number, count: number, total: number): number[] {
  const end = Math.min(start + count, total);
  if (end <= start) return [];
  const pages: number[] = [];
  for (let page = Math.floor(start / REVISION_PAGE); page * REVISION_PAGE < end; page++) pages.push(page);
  return pages;
}

/** The bucket of an origin revision: FNV-1a over its UTF-8 bytes, so every writer and reader agrees. */
export function lookupBucket(originRevision: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(originRevision)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % buckets;
}

/**
 * Whether text can name an origin revision at all: a number (Subversion, TFVC) or hex (Mercurial,
 * Git). Anything else cannot be in a map, and is answered 404 without a read.
 */
export const isOriginRevisionName = (text: string): boolean =>
  /^(?:[0-9]{1,12}|[0-9a-f]{40}|[0-9a-f]{64})$/.test(text);
