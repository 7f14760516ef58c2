/**
 * One authors file for every import of a batch (issue 37, item 4): parsed and checked once (a bad
 * file is 422 before any import is touched), then applied to each import that knows all of its
 * authors with the single import's rules (`applyParsedAuthorsFile`), one import after the other.
 * An import that cannot take it now is skipped with the reason, and one import's refusal stops
 * none of the others (docs/decisions/0157-a-batch-authors-file.md).
 */
import { type AuthorsFileEntry, notInAnyHistory } from '#domain/authors-file';
import { authorsFileSkip } from '#domain/import-batches';
import { HttpError } from '#shared/errors';
import type { Caller } from './authenticate.ts';
import {
  type AuthorsFile,
  type AuthorsFileResult,
  applyParsedAuthorsFile,
  parsedAuthorsFile,
} from './authors-file.ts';
import { type BatchView, importBatch } from './import-batches.ts';

/** What the file did to one entry of the batch. */
export type BatchAuthorsOutcome = { readonly index: number; readonly repository: string } & (
  | { readonly outcome: 'applied'; readonly result: AuthorsFileResult }
  | {
      readonly outcome: 'skipped';
      readonly reason: string;
      /** The HTTP status the single import's PUT answered, when it refused. */
      readonly status?: number | undefined;
    }
);

export interface BatchAuthorsResult {
  readonly view: BatchView;
  readonly format: AuthorsFileResult['format'];
  readonly outcomes: readonly BatchAuthorsOutcome[];
  /** The file's entries that name no author of any import it was applied to. */
  readonly notInAnyHistory: readonly AuthorsFileEntry[];
}

/**
 * PUT /user/import-batches/:batch_id/authors: the batch (404 unless the caller's), the file parsed
 * once (422 per bad line, nothing written), then each complete import mapped as its own PUT
 * …/import/authors would (one rewrite each when anything changed).
 */
export async function applyAuthorsFileToBatch(
  caller: Caller,
  batchId: number,
  file: AuthorsFile,
): Promise<BatchAuthorsResult> {
  const before = await importBatch(caller, batchId);
  const parsed = parsedAuthorsFile(file);
  const outcomes: BatchAuthorsOutcome[] = [];
  for (const { entry, record } of before.entries) {
    const base = { index: entry.index, repository: entry.repository };
    const reason = authorsFileSkip(entry, record?.status);
    if (!record || reason !== undefined) {
      outcomes.push({ ...base, outcome: 'skipped', reason: reason ?? 'the import was deleted' });
      continue;
    }
    try {
      outcomes.push({ ...base, outcome: 'applied', result: await applyParsedAuthorsFile(record, parsed) });
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      const detail = error.details.errors?.[0]?.message;
      outcomes.push({ ...base, outcome: 'skipped', reason: detail ?? error.message, status: error.status });
    }
  }
  const applied = outcomes.flatMap((one) => (one.outcome === 'applied' ? [one.result.notInHistory] : []));
  return {
    view: await importBatch(caller, batchId),
    format: parsed.format,
    outcomes,
    notInAnyHistory: notInAnyHistory(parsed.entries, applied),
  };
}
