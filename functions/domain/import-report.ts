/**
 * The import report (issue 18): what an import could not carry over as it was. Each kind of
 * finding is named by the key the API shows it under; a kind the import did not look for is
 * absent, never guessed (a kind it looked for and did not find has count 0).
 */
import { choicesOf, type Import, type ImportChoices, type LargeFile } from './imports.ts';
import type { RefRename } from './ref-names.ts';

/** Final once the import is `complete` or `error`; `partial` while it runs or waits for a person. */
export type ReportStatus = 'complete' | 'error' | 'partial';

/**
 * Every kind of finding, in the order the API and the progress page list them. The entries'
 * fields for each kind are documented in docs/importing.md ("The import report").
 */
export const FINDING_KINDS = [
  'renamed_refs',
  'kept_deleted_refs',
  'closed_branches',
  'empty_directories',
  'outside_layout_paths',
  'svn_externals',
  'svn_properties',
  'svn_mergeinfo',
  'authorless_commits',
  'hg_subrepos',
  'tfvc_labels',
  'tfvc_shelvesets',
  'tfvc_branches',
  'unstorable_paths',
  'missing_lfs_objects',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

export const isFindingKind = (value: string): value is FindingKind =>
  (FINDING_KINDS as readonly string[]).includes(value);

/** One listed finding: flat fields, named as the API shows them (snake_case). */
export type FindingEntry = Readonly<Record<string, string | number | boolean | null>>;

/** One kind's findings: how many in all, and the first of them. */
export interface Finding {
  readonly count: number;
  readonly listed: readonly FindingEntry[];
}

export type Findings = Readonly<Partial<Record<FindingKind, Finding>>>;

/** At most this many entries of one kind are listed; `count` still counts every one. */
export const MAX_LISTED_FINDINGS = 1000;

/** What the raw step recorded, stored beside the import (after each of its chunks). */
export interface StoredReport {
  /** The raw step has ended: the findings are final for this attempt, the large files scanned. */
  readonly rawDone: boolean;
  readonly findings: Findings;
}

/** What became of the large files: the owner's LFS choice, or nothing to do. */
export type LargeFilesAction = 'none' | 'undecided' | 'moved_to_lfs' | 'removed';

export interface ImportReport {
  readonly status: ReportStatus;
  /** The choices the import runs with (known from the start). */
  readonly choices: ImportChoices;
  /** Empty until the raw step has recorded something (nothing is known before). */
  readonly findings: Findings;
  /** Absent until the raw step has ended (the scan for large files runs at its end). */
  readonly largeFiles?: {
    readonly action: LargeFilesAction;
    readonly count: number;
    readonly size: number;
    readonly listed: readonly LargeFile[];
  };
}

/** A ref rename as the report lists it. */
export const renameEntry = (rename: RefRename): FindingEntry => ({
  kind: rename.kind,
  origin_name: rename.name,
  ref: rename.ref,
  reason: rename.reason,
});

/** A kind's findings from all its entries: every one counted, the first `MAX_LISTED_FINDINGS` listed. */
export const findingOf = (entries: readonly FindingEntry[], count = entries.length): Finding => ({
  count,
  listed: entries.slice(0, MAX_LISTED_FINDINGS),
});

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
  const status = reportStatus(record);
  const choices = choicesOf(record);
  const findings = Object.fromEntries(
    Object.entries(stored?.findings ?? {}).filter(([kind]) => isFindingKind(kind)),
  ) as Findings;
  // The large files are scanned when the raw step ends: before that nothing is known of them.
  if (!stored?.rawDone) return { status, choices, findings };
  return {
    status,
    choices,
    findings,
    largeFiles: {
      action: largeFilesAction(record),
      count: record.largeFilesCount,
      size: record.largeFilesSize,
      listed: largeFiles,
    },
  };
}
