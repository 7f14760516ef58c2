import { batchRevisionsPart } from '#services/import-batch-dashboard';
import { batchPageHandler } from './batch-page.ts';

/** A repository name needs no CSV quoting (letters, digits, `.`, `-`, `_`); revisions and commits neither. */
const line = (repository: string, originRevision: string, commit: string) =>
  `${repository},${originRevision},${commit}\r\n`;

/**
 * GET /imports/batches/:batch_id/revisions.csv?part=N: part N of every import's revision map,
 * `repository,origin_revision,commit`, at most 10,000 lines a part (about 0.9 MB: far under
 * Lambda's 6 MB answer), whole maps packed together in the batch's order (`revisionParts`).
 */
export const handler = batchPageHandler(async (request, caller, batchId) => {
  const part = /^[1-9]\d{0,6}$/.test(request.query.part ?? '') ? Number(request.query.part) : 1;
  const { lines } = await batchRevisionsPart(caller, batchId, part);
  return {
    download: {
      contentType: 'text/csv; charset=utf-8',
      filename: `import-batch-${batchId}-revisions-${part}.csv`,
      body: `repository,origin_revision,commit\r\n${lines.map(([repository, entry]) => line(repository, entry.originRevision, entry.commit)).join('')}`,
    },
  };
});
