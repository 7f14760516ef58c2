import type { WebPage } from '#http/middleware/web-stack';
import type { BatchAuthorsOutcome, BatchAuthorsResult } from '#services/import-batch-authors';
import { type Html, html } from '#shared/html';
import { authorsDownloadLinks } from '../import-page/authors-view.ts';
import { paths } from '../import-page/paths.ts';
import { batchPaths } from './paths.ts';

/*
 * The answer to a batch's authors file: per import what it did (or why it was skipped), the links
 * to each import's current mapping, and the entries that name no author of any import.
 */

function outcomeItem(owner: string, one: BatchAuthorsOutcome): Html {
  const repo = { owner, repo: one.repository };
  const name = html`<a href="${paths.page(repo)}">${one.repository}</a>`;
  if (one.outcome === 'skipped')
    return html`<li id="batch-authors-${one.index}" data-outcome="skipped">${name}: skipped, ${one.reason}</li>`;
  const { result } = one;
  const words =
    result.changed === 0
      ? 'nothing changed'
      : `${result.changed} ${result.changed === 1 ? 'author' : 'authors'} mapped${result.rewriting ? ', history being rewritten once' : ''}`;
  const unnamed =
    result.notInFile.length === 0
      ? html``
      : html`; not in the file: ${result.notInFile.map((author, n) => html`${n > 0 ? ', ' : ''}<code>${author.remoteName || author.remoteId}</code>`)}`;
  return html`<li id="batch-authors-${one.index}" data-outcome="applied">${name}: ${words} (${result.mapped.length} named by the file, ${result.notInHistory.length} entries not in its history${unnamed}). Current mapping: <ul class="inline">${authorsDownloadLinks(repo)}</ul></li>`;
}

/** POST /imports/batches/:batch_id/authors: what the file did to each import of the batch. */
export function batchAuthorsAnswer(result: BatchAuthorsResult): WebPage {
  const { batch } = result.view;
  const applied = result.outcomes.filter((one) => one.outcome === 'applied').length;
  const skipped = result.outcomes.length - applied;
  const missing = result.notInAnyHistory.map(
    (entry) =>
      html`<li>Line ${entry.line}: <code>${entry.origin}</code> → ${entry.name} &lt;${entry.email}&gt;</li>`,
  );
  return {
    status: 200,
    title: `Authors file · import batch ${batch.id}`,
    body: html`<h1>Authors file for import batch ${batch.id}</h1>
<div class="notice" role="status"><p>Applied to ${applied} ${applied === 1 ? 'import' : 'imports'}${skipped > 0 ? `; ${skipped} skipped (send the file again once they are complete)` : ''}.</p></div>
<p><a href="${batchPaths.dashboard(batch.id)}">Back to the batch</a></p>
<section aria-labelledby="batch-authors-outcomes-heading"><h2 id="batch-authors-outcomes-heading">Imports (${result.outcomes.length})</h2>
<ul id="batch-authors-outcomes">${result.outcomes.map((one) => outcomeItem(batch.ownerLogin, one))}</ul></section>
<section aria-labelledby="batch-authors-not-in-any-heading"><h2 id="batch-authors-not-in-any-heading">In the file, in no import's history (${missing.length})</h2>${
      missing.length === 0
        ? html`<p class="muted">Every entry names an author of at least one import.</p>`
        : html`<ul id="batch-authors-not-in-any">${missing}</ul>`
    }</section>`,
  };
}
