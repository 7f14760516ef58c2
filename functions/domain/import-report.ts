/**
 * The import report (issue 18): what an import could not carry over as it was. Only kinds the
 * service records are in it; the others are absent, never guessed.
 */
import type { Import, LargeFile } from './imports.ts';
import type { RefRename } from './ref-names.ts';

/** Final once the import is `complete` or `error`; `partial` while it runs or waits for a person. */
export type ReportStatus = 'complete' | 'error' | 'partial';

/** What the raw step recorded when it ended (stored beside the import). */
export interface StoredReport {
  readonly renamedRefsCount: number;
  /** The first renames (all of them unless there are very many). */
  readonly renamedRefs: readonly RefRename[];
}

/** What became of the large files: the owner's LFS choice, or nothing to do. */
export type LargeFilesAction = 'none' | 'undecided' | 'moved_to_lfs' | 'removed';

export interface ImportReport {
  readonly status: ReportStatus;
  /** Absent until the raw step has ended (nothing is known before). */
  readonly stored?: StoredReport;
  readonly largeFiles?: {
    readonly action: LargeFilesAction;
    readonly count: number;
    readonly size: number;
    readonly listed: readonly LargeFile[];
  };
}

export const reportStatus = (record: Pick<Import, 'status'>): ReportStatus =>
  record.status === 'complete' || record.status === 'error' ? record.status : 'partial';

export function largeFilesAction(record: Pick<Import, 'largeFilesCount' | 'useLfs'>): LargeFilesAction {
  if (record.largeFilesCount === 0) return 'none';
  if (record.useLfs === 'opt_in') return 'moved_to_lfs';
  if (record.useLfs === 'opt_out') return 'removed';
  return 'undecided';
}

/** The report of an import, from the import, its stored report and its listed large files. */
export function composeReport(
  record: Import,
  stored: StoredReport | undefined,
  largeFiles: readonly LargeFile[],
): ImportReport {
  // The large files are scanned in the same step that writes the report: both or neither are known.
  if (!stored) return { status: reportStatus(record) };
  return {
    status: reportStatus(record),
    stored,
    largeFiles: {
      action: largeFilesAction(record),
      count: record.largeFilesCount,
      size: record.largeFilesSize,
      listed: largeFiles,
    },
  };
}
