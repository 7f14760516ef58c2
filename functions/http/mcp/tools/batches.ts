import * as z from 'zod/mini';
import { pageRequest } from '#domain/pagination';
import {
  createImportBatch,
  cutOverImportBatch,
  followImportBatch,
  importBatch,
  listImportBatches,
  syncImportBatch,
} from '#services/import-batches';
import { batchInput, createBody } from '../../import-batches/body.ts';
import { body as followBody } from '../../import-batches/follow.ts';
import { batchActionJson, importBatchJson, importBatchSummaryJson } from '../../json/import-batch.ts';
import { POLL_HINT, pageFields, pageQuery, tool } from '../tool.ts';

const batchId = {
  batch_id: z.number().check(z.describe('The batch id (start_import_batch, list_import_batches).')),
};

/** A batch in one sentence: each import's repository and status. */
function batchSentence(json: ReturnType<typeof importBatchJson>): string {
  const imports = json.imports.map((entry) => `${entry.repository} ${entry.status ?? 'queued'}`);
  return `Batch ${json.id}: ${imports.join(', ') || 'no imports'}.`;
}

/** The answer of an action on all of a batch's imports. */
function actionAnswer(verb: string, json: ReturnType<typeof batchActionJson>) {
  const outcomes = json.outcomes.map(
    (one) => `${one.repository} ${one.outcome}${one.message ? ` (${one.message})` : ''}`,
  );
  return { text: `${verb} batch ${json.id}: ${outcomes.join(', ') || 'nothing to do'}.`, structured: json };
}

export const startBatchTool = tool({
  name: 'start_import_batch',
  title: 'Import many projects at once',
  description: `Creates the repositories and imports of many projects in one call: the projects of a Subversion root, an hgweb index or a TFVC collection (vcs_url, vcs, projects), a list of origins (imports), or the projects an import found (from_import: "owner/repo"). Every name is checked first; at most concurrency imports run at once, the rest queue. As POST /user/import-batches. Returns at once: call get_import_batch (or get_import_status for one import) until every import is complete.`,
  mirrors: 'import-batches/create',
  input: createBody,
  resource: 'ImportBatch',
  readOnly: false,
  run: async (caller, input, urls) => {
    const json = importBatchJson(await createImportBatch(caller, batchInput(input)), urls);
    return { text: `Started. ${batchSentence(json)}`, structured: json };
  },
});

export const getBatchTool = tool({
  name: 'get_import_batch',
  title: 'A batch and its imports',
  description: `A batch with every import's status and sync state. As GET /user/import-batches/{batch_id}. ${POLL_HINT}`,
  mirrors: 'import-batches/get',
  input: z.object(batchId),
  resource: 'ImportBatch',
  readOnly: true,
  run: async (caller, input, urls) => {
    const json = importBatchJson(await importBatch(caller, input.batch_id), urls);
    return { text: batchSentence(json), structured: json };
  },
});

export const listBatchesTool = tool({
  name: 'list_import_batches',
  title: 'My import batches',
  description: 'Your batches of imports, newest first, one page at a time. As GET /user/import-batches.',
  mirrors: 'import-batches/list',
  input: z.object(pageFields),
  resource: 'ImportBatch',
  readOnly: true,
  run: async (caller, input, urls) => {
    const request = pageRequest(pageQuery(input));
    const page = await listImportBatches(caller, request);
    const batches = page.items.map((batch) => importBatchSummaryJson(batch, urls));
    const more = request.page * request.perPage < page.total;
    return {
      text: `${page.total} batches; page ${request.page}: ${batches.map((batch) => `#${batch.id}`).join(', ') || 'none'}.`,
      structured: {
        total_count: page.total,
        page: request.page,
        next_page: more ? request.page + 1 : null,
        batches,
      },
    };
  },
});

export const followBatchTool = tool({
  name: 'follow_import_batch',
  title: 'Follow every origin of a batch',
  description:
    'Every complete import of the batch follows its origin with this interval (null: on demand); the others once they complete. As PUT /user/import-batches/{batch_id}/sync.',
  mirrors: 'import-batches/follow',
  input: z.extend(followBody, batchId),
  resource: 'ImportBatch',
  readOnly: false,
  run: async (caller, input, urls) =>
    actionAnswer(
      'Followed',
      batchActionJson(await followImportBatch(caller, input.batch_id, input.interval_minutes), urls),
    ),
});

export const syncBatchTool = tool({
  name: 'sync_import_batch',
  title: 'Sync a batch now',
  description: `Syncs every following import of the batch now. As POST /user/import-batches/{batch_id}/sync. ${POLL_HINT}`,
  mirrors: 'import-batches/sync-now',
  input: z.object(batchId),
  resource: 'ImportBatch',
  readOnly: false,
  run: async (caller, input, urls) =>
    actionAnswer('Synced', batchActionJson(await syncImportBatch(caller, input.batch_id), urls)),
});

export const cutOverBatchTool = tool({
  name: 'cut_over_import_batch',
  title: 'Cut a batch over',
  description:
    'Cuts every following import of the batch over. As DELETE /user/import-batches/{batch_id}/sync.',
  mirrors: 'import-batches/cut-over',
  input: z.object(batchId),
  resource: 'ImportBatch',
  readOnly: false,
  run: async (caller, input, urls) =>
    actionAnswer('Cut over', batchActionJson(await cutOverImportBatch(caller, input.batch_id), urls)),
});
