import { importRevisions } from '#services/imports';
import { importPageHandler } from './import-page.ts';
import { REVISIONS_PER_CSV } from './views.ts';

/**
 * GET /:owner/:repo/import/revisions.csv?part=N: entries (N−1)·10,000+1 … N·10,000 of the revision
 * map as `origin_revision,commit` lines under that header, for the owner only. Both columns are
 * digits or hex, so no value needs CSV quoting.
 */
export const handler = importPageHandler(async (request, caller, repo) => {
  const part = /^[1-9]\d{0,6}$/.test(request.query.part ?? '') ? Number(request.query.part) : 1;
  const { revisions } = await importRevisions(caller, repo.owner, repo.repo, {
    page: part,
    perPage: REVISIONS_PER_CSV,
    perPageGiven: true,
  });
  const lines = revisions.items.map((entry) => `${entry.originRevision},${entry.commit}\r\n`);
  return {
    download: {
      contentType: 'text/csv; charset=utf-8',
      filename: `${repo.repo}-revisions-${part}.csv`,
      body: `origin_revision,commit\r\n${lines.join('')}`,
    },
  };
});
