import { pageRequest } from '#domain/pagination';
import { webHandler } from '#http/middleware/web-stack';
import { listImportBatches } from '#services/import-batches';
import { html } from '#shared/html';
import { timeWords } from '../import-page/following-view.ts';
import { sessionCaller } from '../import-page/import-page.ts';
import { batchPaths } from './paths.ts';

const PER_PAGE = 50;

/** GET /imports/batches?page=: the signed-in person's import batches, newest first. */
export const handler = webHandler(async (request) => {
  const caller = sessionCaller(request);
  if (!caller) return { location: `/login?return_to=${encodeURIComponent(request.event.path)}`, status: 302 };
  const { page } = pageRequest({ page: request.query.page });
  const batches = await listImportBatches(caller, { page, perPage: PER_PAGE, perPageGiven: true });
  const last = Math.max(1, Math.ceil(batches.total / PER_PAGE));
  const rows = batches.items.map(
    (batch) =>
      html`<tr><td data-label="Batch"><a href="${batchPaths.dashboard(batch.id)}">Batch ${batch.id}</a></td><td data-label="Started" class="labelled">${timeWords(batch.createdAt)}</td><td data-label="Repositories" class="num labelled">${batch.total}</td><td data-label="Queued" class="num labelled">${batch.queued}</td><td data-label="Running" class="num labelled">${batch.running}</td></tr>`,
  );
  const nav =
    last > 1
      ? html`<nav aria-label="Pages of batches"><p class="muted">Page ${page} of ${last}. ${page > 1 ? html`<a href="${batchPaths.list()}?page=${page - 1}" rel="prev">Newer</a>` : ''} ${page < last ? html`<a href="${batchPaths.list()}?page=${page + 1}" rel="next">Older</a>` : ''}</p></nav>`
      : undefined;
  return {
    title: 'Import batches',
    body: html`<h1>Your import batches</h1>
${
  batches.total === 0
    ? html`<p>You have no import batches. A batch imports many projects at once (<code>POST /user/import-batches</code>).</p>`
    : html`<table class="compact stack">
<caption class="visually-hidden">Your import batches, newest first</caption>
<thead><tr><th scope="col">Batch</th><th scope="col">Started</th><th scope="col">Repositories</th><th scope="col">Queued</th><th scope="col">Running</th></tr></thead>
<tbody>${rows}</tbody>
</table>${nav}`
}`,
  };
});
