import * as z from 'zod/mini';
import type { SentImportChoices } from '#domain/imports';

/**
 * The owner's choices as `PUT …/import` and a restarting `PATCH …/import` take them (extension
 * fields: GitHub has none). Booleans only; absent fields keep their value.
 */
export const importChoicesFields = {
  keep_empty_directories: z.optional(z.boolean()),
  keep_deleted_refs: z.optional(z.boolean()),
};

export const sentChoices = (body: {
  readonly keep_empty_directories?: boolean | undefined;
  readonly keep_deleted_refs?: boolean | undefined;
}): SentImportChoices => ({
  keepEmptyDirectories: body.keep_empty_directories,
  keepDeletedRefs: body.keep_deleted_refs,
});
