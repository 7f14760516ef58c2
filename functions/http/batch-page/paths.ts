import { pathTo } from '#shared/routes';

/** Addresses of the batch pages and their form targets, from the route table. */
export const batchPaths = {
  list: () => pathTo('batch-page/list'),
  dashboard: (batchId: number) => pathTo('batch-page/dashboard', { batch_id: batchId }),
  follow: (batchId: number) => pathTo('batch-page/follow', { batch_id: batchId }),
  syncNow: (batchId: number) => pathTo('batch-page/sync-now', { batch_id: batchId }),
  cutOver: (batchId: number) => pathTo('batch-page/cut-over', { batch_id: batchId }),
  authors: (batchId: number) => pathTo('batch-page/authors', { batch_id: batchId }),
  revisionsCsv: (batchId: number, part: number) =>
    `${pathTo('batch-page/revisions-csv', { batch_id: batchId })}?part=${part}`,
} as const;
