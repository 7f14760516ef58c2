import * as z from 'zod/mini';
import { isSyncInterval, MAX_SYNC_INTERVAL_MINUTES, MIN_SYNC_INTERVAL_MINUTES } from '#domain/import-sync';
import { apiHandler } from '#http/middleware/http-stack';
import { followImportOrigin } from '#services/import-sync';
import { importSyncJson } from '../json/import-sync.ts';
import { aliasedBoolean } from './deprecated-alias.ts';

export const body = z.object({
  interval_minutes: z.nullable(
    z
      .number()
      .check(
        z.refine(
          isSyncInterval,
          `interval_minutes must be a whole number from ${MIN_SYNC_INTERVAL_MINUTES} to ${MAX_SYNC_INTERVAL_MINUTES}, or null (on demand only)`,
        ),
      ),
  ),
  /** Branches and tags the origin deletes are kept as backup refs; absent: unchanged (false at first). */
  keep_refs_deleted_while_following: z.optional(z.boolean()),
  /** The deprecated name of `keep_refs_deleted_while_following` (decision 0150). */
  keep_deleted_refs: z.optional(z.boolean()),
});

/**
 * PUT /repos/:owner/:repo/import/sync: the repository follows its origin from now on, syncing
 * every `interval_minutes` (null: on demand only), until the cut-over (an extension).
 */
export const handler = apiHandler(
  { body: { schema: body, resource: 'ImportSync' } },
  async ({ body, caller, params, urls }) => {
    const { record, sync } = await followImportOrigin(
      caller,
      params.owner ?? '',
      params.repo ?? '',
      body.interval_minutes,
      aliasedBoolean(
        'ImportSync',
        'keep_refs_deleted_while_following',
        body.keep_refs_deleted_while_following,
        'keep_deleted_refs',
        body.keep_deleted_refs,
      ),
    );
    return { status: 200, body: importSyncJson(record, sync, urls) };
  },
);
