import * as z from 'zod/mini';
import type { SentImportChoices } from '#domain/imports';
import { aliasedBoolean } from './deprecated-alias.ts';

/**
 * The owner's choices as `PUT …/import` and a restarting `PATCH …/import` take them (extension
 * fields: GitHub has none). Booleans only; absent fields keep their value. `keep_deleted_refs` is
 * the deprecated name of `keep_refs_deleted_in_history` (decision 0150).
 */
export const importChoicesFields = {
  keep_empty_directories: z.optional(z.boolean()),
  keep_refs_deleted_in_history: z.optional(z.boolean()),
  keep_deleted_refs: z.optional(z.boolean()),
};

export const sentChoices = (body: {
  readonly keep_empty_directories?: boolean | undefined;
  readonly keep_refs_deleted_in_history?: boolean | undefined;
  readonly keep_deleted_refs?: boolean | undefined;
}): SentImportChoices => ({
  keepEmptyDirectories: body.keep_empty_directories,
  keepDeletedRefs: aliasedBoolean(
    'Import',
    'keep_refs_deleted_in_history',
    body.keep_refs_deleted_in_history,
    'keep_deleted_refs',
    body.keep_deleted_refs,
  ),
});
