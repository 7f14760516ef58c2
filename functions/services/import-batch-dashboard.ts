/**
 * What the batch dashboard reads (issue 37, item 5) beyond the batch resource itself
 * (`importBatch`, which already carries each entry's import and sync): each import's finding
 * counts and revision-map size, read for all imports together (`data/imports/batch-reads.ts`),
 * and the batch's revision maps as CSV parts (`revisionParts`). Owner only, as the batch.
 */
import { getBatch, listEntries } from '#data/import-batches';
import {
  findingCountsOf,
  type ImportRef,
  importsAndSyncsOf,
  revisionTotalsOf,
} from '#data/imports/batch-reads';
import { pageOfRevisions } from '#data/imports/revision-map';
import { revisionParts } from '#domain/batch-dashboard';
import { FINDING_KINDS, type FindingKind } from '#domain/import-report';
import { SYNC_OFF } from '#domain/import-sync';
import type { RevisionEntry } from '#domain/revision-map';
import { notFound } from '#shared/errors';
import type { Caller } from './authenticate.ts';
import { type BatchView, importBatch } from './import-batches.ts';

export interface BatchDashboard {
  readonly view: BatchView;
  /** By import id: counts of each kind the report found (none: empty). */
  readonly findings: ReadonlyMap<number, Partial<Record<FindingKind, number>>>;
  /** How many CSV parts the batch's revision maps make (0: no map has an entry yet). */
  readonly revisionParts: number;
  /** Entries in all the maps together. */
  readonly revisionCount: number;
}

/** The imports of a batch that exist (queued and cancelled entries have none yet). */
function importsOf(view: BatchView): ImportRef[] {
  return view.entries.flatMap(({ entry, record }) =>
    record ? [{ owner: view.batch.ownerLogin, repo: entry.repository, importId: record.importId }] : [],
  );
}

async function totalsOf(view: BatchView, imports: readonly ImportRef[]) {
  const totals = await revisionTotalsOf(imports);
  return view.entries.map(({ entry, record }) => ({
    index: entry.index,
    total: record ? (totals.get(record.importId) ?? 0) : 0,
  }));
}

/**
 * The dashboard's data: the batch resource as `importBatch` makes it, each import's finding
 * counts and the size of its revision map. Read in two round trips whatever the batch's size: the
 * batch and its entries (a GetItem and a Query), then every import, sync item, report count and
 * map header by BatchGetItem, all sent together (`importBatch` reads each import with GetItems).
 */
export async function batchDashboard(caller: Caller, batchId: number): Promise<BatchDashboard> {
  if (caller.kind !== 'user') throw notFound();
  const owner = caller.user.login;
  const [batch, entries] = await Promise.all([getBatch(owner, batchId), listEntries(owner, batchId)]);
  if (!batch) throw notFound();
  const started: ImportRef[] = entries.flatMap((entry) =>
    entry.state === 'started' ? [{ owner, repo: entry.repository, importId: entry.importId }] : [],
  );
  const [imports, findings, totals] = await Promise.all([
    importsAndSyncsOf(started),
    findingCountsOf(started, FINDING_KINDS),
    revisionTotalsOf(started),
  ]);
  const view: BatchView = {
    batch,
    entries: entries.map((entry) => {
      const found = entry.state === 'started' ? imports.get(entry.importId) : undefined;
      return found ? { entry, record: found.record, sync: found.sync ?? SYNC_OFF } : { entry };
    }),
  };
  const perEntry = view.entries.map(({ entry, record }) => ({
    index: entry.index,
    total: record ? (totals.get(record.importId) ?? 0) : 0,
  }));
  return {
    view,
    findings,
    revisionParts: revisionParts(perEntry).length,
    revisionCount: perEntry.reduce((sum, { total }) => sum + total, 0),
  };
}

/** Slices of one part read at once (each a header read and one BatchGetItem). */
const SLICES_IN_FLIGHT = 8;

/**
 * Part `part` (1-based) of the batch's revision maps: its lines as (repository, entry), in the
 * batch's order and each map's origin order. 404 for a part past the last.
 */
export async function batchRevisionsPart(
  caller: Caller,
  batchId: number,
  part: number,
): Promise<{ readonly view: BatchView; readonly lines: readonly [string, RevisionEntry][] }> {
  const view = await importBatch(caller, batchId);
  const slices = revisionParts(await totalsOf(view, importsOf(view)))[part - 1];
  if (!slices) throw notFound();
  const byIndex = new Map(view.entries.map((entry) => [entry.entry.index, entry]));
  const read: RevisionEntry[][] = new Array(slices.length);
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < slices.length; n = next++) {
      const slice = slices[n];
      const entry = slice && byIndex.get(slice.index);
      if (!slice || !entry?.record) continue;
      read[n] = (
        await pageOfRevisions(
          view.batch.ownerLogin,
          entry.entry.repository,
          entry.record.importId,
          slice.start,
          slice.count,
        )
      ).entries;
    }
  };
  await Promise.all(Array.from({ length: Math.min(SLICES_IN_FLIGHT, slices.length) }, worker));
  const lines = slices.flatMap((slice, n) => {
    const repository = byIndex.get(slice.index)?.entry.repository ?? '';
    return (read[n] ?? []).map((entry): [string, RevisionEntry] => [repository, entry]);
  });
  return { view, lines };
}
