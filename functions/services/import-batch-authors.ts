/**
 * One authors file for every import of a batch (issue 37, item 4): parsed and checked once (a bad
 * file is 422 before any import is touched), then applied to each import that knows all of its
 * authors with the single import's rules (`applyParsedAuthorsFile`), up to eight at a time.
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
  type ParsedAuthorsFile,
  parsedAuthorsFile,
} from './authors-file.ts';
import { type BatchEntryView, type BatchView, importBatch } from './import-batches.ts';

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
 * Imports the file is applied to at once: each is a few round trips and a workflow start, and a
 * batch of 200 one after the other would be near API Gateway's 29 s.
 */
const IMPORTS_IN_FLIGHT = 8;

/** The file applied to one entry, or why not (its refusal is its outcome, and stops nothing). */
async function applyToEntry(
  { entry, record }: BatchEntryView,
  parsed: ParsedAuthorsFile,
): Promise<BatchAuthorsOutcome> {
  const base = { index: entry.index, repository: entry.repository };
  const reason = authorsFileSkip(entry, record?.status);
  if (!record || reason !== undefined)
    return { ...base, outcome: 'skipped', reason: reason ?? 'the import was deleted' };
  try {
    return { ...base, outcome: 'applied', result: await applyParsedAuthorsFile(record, parsed) };
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    const detail = error.details.errors?.[0]?.message;
    return { ...base, outcome: 'skipped', reason: detail ?? error.message, status: error.status };
  }
}

/**
 * PUT /user/import-batches/:batch_id/authors: the batch (404 unless the caller's), the file parsed
 * once (422 per bad line, nothing written), then each complete import mapped as its own PUT
 * …/import/authors would (one rewrite each when anything changed), up to `IMPORTS_IN_FLIGHT` at once.
 */
export async function applyAuthorsFileToBatch(
  caller: Caller,
  batchId: number,
  file: AuthorsFile,
): Promise<BatchAuthorsResult> {
  const before = await importBatch(caller, batchId);
  const parsed = parsedAuthorsFile(file);
  const outcomes: BatchAuthorsOutcome[] = new Array(before.entries.length);
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < before.entries.length; n = next++) {
      const view = before.entries[n];
      if (view) outcomes[n] = await applyToEntry(view, parsed);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IMPORTS_IN_FLIGHT, before.entries.length) }, worker));
  const applied = outcomes.flatMap((one) => (one.outcome === 'applied' ? [one.result.notInHistory] : []));
  return {
    view: await importBatch(caller, batchId),
    format: parsed.format,
    outcomes,
    notInAnyHistory: notInAnyHistory(parsed.entries, applied),
  };
}
