import type { SyncState } from '#domain/import-sync';
import { type Import, statusText } from '#domain/imports';
import type { WebPage } from '#http/middleware/web-stack';
import type { OverviewPage, RepositoryOverview } from '#services/repository-overview';
import { type Html, html } from '#shared/html';
import { pathTo } from '#shared/routes';

/*
 * The home page (issue 37): signed in, the person's repositories with their imports; signed out,
 * what the service is and the way in.
 */

const FOLLOWING_WORDS: Readonly<Record<SyncState, string>> = {
  following: 'Following its origin',
  cut_over: 'Cut over',
  off: 'Not following',
};

/** How far the import is, in percent, when its status says (the raw step, then the push). */
function percentOf(record: Import): number | undefined {
  if (record.status === 'complete') return 100;
  const value = record.status === 'pushing' ? record.pushPercent : record.percent;
  return value === null ? undefined : Math.max(0, Math.min(100, Math.round(value)));
}

function entry({ repository, record, following }: RepositoryOverview): Html {
  const name = `${repository.ownerLogin}/${repository.name}`;
  const badge = repository.private ? html` <span class="badge">Private</span>` : undefined;
  if (!record)
    return html`<li><span class="repo-name">${name}${badge}</span><span class="muted">No import</span><span></span><span></span></li>`;
  const percent = percentOf(record);
  const link = pathTo('import-page/progress', { owner: repository.ownerLogin, repo: repository.name });
  return html`<li data-status="${record.status}" data-following="${following}">
<span><a class="repo-name" href="${link}">${name}</a>${badge}</span>
<span>${statusText(record.status)}</span>
<span class="repo-percent">${
    percent === undefined
      ? html`<span class="muted">–</span>`
      : html`<progress max="100" value="${percent}" aria-label="${name}: ${percent}%"></progress> ${percent}%`
  }</span>
<span${following === 'off' ? html` class="muted"` : ''}>${FOLLOWING_WORDS[following]}</span>
</li>`;
}

export function homePage(overview: OverviewPage, after: string | undefined): WebPage {
  const list =
    overview.entries.length === 0
      ? html`<div class="panel"><p>You have no repositories yet. Bring one over from another server: Git, Subversion, Mercurial or TFVC.</p></div>`
      : html`<ul class="repo-list" aria-label="Your repositories">
<li class="repo-list-head" aria-hidden="true"><span>Repository</span><span>Import</span><span>Progress</span><span>Following</span></li>
${overview.entries.map(entry)}
</ul>`;
  const paging =
    overview.next !== undefined || after !== undefined
      ? html`<nav class="actions" aria-label="More repositories">${
          after !== undefined ? html`<a href="/">First page</a>` : undefined
        }${
          overview.next !== undefined
            ? html`<a href="/?after=${encodeURIComponent(overview.next)}" rel="next">Next repositories</a>`
            : undefined
        }</nav>`
      : undefined;
  return {
    title: 'Your repositories',
    body: html`<div class="page-head">
<h1>Your repositories</h1>
<a class="button-link" href="${pathTo('new-import/form')}">Import a repository</a>
</div>
${list}
${paging}
<p class="muted">Imports of several projects at once are in <a href="${pathTo('batch-page/list')}">your import batches</a>.</p>`,
  };
}

export function welcomePage(): WebPage {
  return {
    title: 'Move your repositories here',
    body: html`<h1>Move your repositories here</h1>
<p>Import a repository from Git, Subversion, Mercurial or TFVC, with its whole history, and follow the old server until you cut over.</p>
<div class="actions">
<a class="button-link" href="/login?return_to=%2F">Sign in</a>
<a href="/signup?return_to=%2F">Create an account</a>
</div>`,
  };
}
