/**
 * What the history scan (`history-findings.ts`) has counted so far, kept in `svn-scan.json` so a
 * sync scans only the revisions the mirror gained and its findings equal a scan of the whole
 * history (the scanned ranges never overlap: each revision is counted once).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type FindingEntry, MAX_LISTED_FINDINGS } from '#domain/import-report';

const TALLY_FILE = 'svn-scan.json';

/** Up to `MAX_LISTED_FINDINGS` entries, and how many there were. */
export class Listing {
  constructor(
    readonly entries: FindingEntry[] = [],
    public count = 0,
  ) {}
  add(entry: FindingEntry): void {
    this.count += 1;
    if (this.entries.length < MAX_LISTED_FINDINGS) this.entries.push(entry);
  }
}

/**
 * Entries found out of order, each with its place (the dump's order): the first
 * `MAX_LISTED_FINDINGS` by place, and how many there were.
 */
export class PlacedListing {
  private items: { place: number; entry: FindingEntry }[] = [];
  private count = 0;
  add(place: number, entry: FindingEntry): void {
    this.count += 1;
    this.items.push({ place, entry });
    if (this.items.length >= 2 * MAX_LISTED_FINDINGS) this.trim();
  }
  /** Appends them, in order of place (equal places as they were added), to `listing`. */
  appendTo(listing: Listing): void {
    this.trim();
    for (const { entry } of this.items) listing.add(entry);
    listing.count += this.count - this.items.length;
  }
  private trim(): void {
    this.items.sort((a, b) => a.place - b.place);
    this.items.length = Math.min(this.items.length, MAX_LISTED_FINDINGS);
  }
}

export interface ScanTally {
  /** Each path beside the layout → the first revision it appeared in. */
  readonly outside: Map<string, number>;
  readonly externals: Listing;
  readonly mergeinfo: Listing;
  readonly authorless: Listing;
  /** Files added or copied to a path Git must not store (the rules drop them: `rules.ts`). */
  readonly unstorable: Listing;
  /** Each path with a name Git must not store → the first revision it appeared in (`copied-paths.ts`). */
  readonly unstorableNames: Map<string, number>;
  /** Each node property Git has no place for → the paths it was set on, in how many revisions. */
  readonly nodeProps: Map<string, { paths: Set<string>; revisions: number }>;
  /** Each revision property Git has no place for → how many revisions carry it. */
  readonly revisionProps: Map<string, number>;
}

export const emptyTally = (): ScanTally => ({
  outside: new Map(),
  externals: new Listing(),
  mergeinfo: new Listing(),
  authorless: new Listing(),
  unstorable: new Listing(),
  unstorableNames: new Map(),
  nodeProps: new Map(),
  revisionProps: new Map(),
});

interface SavedListing {
  readonly entries: FindingEntry[];
  readonly count: number;
}

interface SavedTally {
  readonly outside: [string, number][];
  readonly externals: SavedListing;
  readonly mergeinfo: SavedListing;
  readonly authorless: SavedListing;
  /** Absent in a tally saved before issue 28, the next one before copies' files were listed. */
  readonly unstorable?: SavedListing;
  readonly unstorableNames?: [string, number][];
  readonly nodeProps: [string, { paths: string[]; revisions: number }][];
  readonly revisionProps: [string, number][];
}

const listing = (saved: SavedListing) => new Listing(saved.entries, saved.count);

/**
 * The tally of the revisions scanned before `from`; undefined when the scan must start at the
 * beginning: `from` is, or the tally was saved before it knew every name it now keeps.
 */
export async function loadTally(workDir: string, from: number): Promise<ScanTally | undefined> {
  if (from <= 1) return undefined;
  const saved = JSON.parse(await readFile(join(workDir, TALLY_FILE), 'utf8')) as SavedTally;
  if (saved.unstorable === undefined || saved.unstorableNames === undefined) return undefined;
  return {
    outside: new Map(saved.outside),
    externals: listing(saved.externals),
    mergeinfo: listing(saved.mergeinfo),
    authorless: listing(saved.authorless),
    unstorable: listing(saved.unstorable),
    unstorableNames: new Map(saved.unstorableNames),
    nodeProps: new Map(
      saved.nodeProps.map(([name, seen]) => [
        name,
        { paths: new Set(seen.paths), revisions: seen.revisions },
      ]),
    ),
    revisionProps: new Map(saved.revisionProps),
  };
}

export async function saveTally(workDir: string, tally: ScanTally): Promise<void> {
  const saved: SavedTally = {
    outside: [...tally.outside],
    externals: tally.externals,
    mergeinfo: tally.mergeinfo,
    authorless: tally.authorless,
    unstorable: tally.unstorable,
    unstorableNames: [...tally.unstorableNames],
    nodeProps: [...tally.nodeProps].map(([name, seen]) => [
      name,
      { paths: [...seen.paths], revisions: seen.revisions },
    ]),
    revisionProps: [...tally.revisionProps],
  };
  await writeFile(join(workDir, TALLY_FILE), JSON.stringify(saved));
}
