import { derivedRepositoryName } from '#domain/import-batches';
import type { ImportReport } from '#domain/import-report';
import type { ImportSync } from '#domain/import-sync';
import {
  acceptsCredentials,
  acceptsProjectChoice,
  type FailedStep,
  type Import,
  type ImportAuthor,
  type ImportStatus,
  type LargeFile,
  MAX_VCS_PASSWORD_LENGTH,
  MAX_VCS_USERNAME_LENGTH,
  statusText,
  type UseLfs,
} from '#domain/imports';
import type { Page, PageRequest } from '#domain/pagination';
import type { WebPage, WebRequest } from '#http/middleware/web-stack';
import { type Html, html } from '#shared/html';
import { csrfField } from '#shared/page-layout';
import { pathTo } from '#shared/routes';
import { AUTHORS_FILTER, authorsTools } from './authors-view.ts';
import { followingRegion } from './following-view.ts';
import { LIVE_SCRIPT_HASH, liveScript } from './live-script.ts';
import { noticeBox } from './notices.ts';
import { paths, type RepoName } from './paths.ts';
import { reportRegion } from './report-view.ts';
import { formatBytes } from './report-words.ts';

/*
 * The import progress page (issue 8, "Progress page"): pure views over the import, its authors,
 * its large files and its report (`report-view.ts`). Every value goes through `html`, so names from the origin are text.
 * Regions marked `data-live` (with an id) are what the live script swaps in.
 */

/** Statuses after which nothing changes without a person acting: the page stops polling. */
export const isFinalStatus = (status: ImportStatus): boolean =>
  status === 'complete' || status === 'error' || status === 'detection_found_nothing';

const STEP_NAMES: Readonly<Record<FailedStep, string>> = {
  detection: 'Detection',
  raw: 'Raw import',
  rewrite: 'Rewrite',
  push: 'Push',
};
const STEPS: readonly FailedStep[] = ['detection', 'raw', 'rewrite', 'push'];

/** The step a status belongs to (`auth_failed` happens while importing; `error` says its step). */
function currentStep(record: Pick<Import, 'status' | 'failedStep'>): FailedStep | 'done' {
  switch (record.status) {
    case 'detecting':
    case 'detection_needs_auth':
    case 'detection_found_nothing':
    case 'detection_found_multiple':
      return 'detection';
    case 'importing':
    case 'auth_failed':
      return 'raw';
    case 'mapping':
      return 'rewrite';
    case 'pushing':
      return 'push';
    case 'complete':
      return 'done';
    case 'error':
      return record.failedStep ?? 'detection';
  }
}

export type StepState = 'done' | 'running' | 'waiting' | 'failed' | 'pending';

export interface StepView {
  readonly step: FailedStep;
  readonly name: string;
  readonly state: StepState;
  /** 0–100, or null for an indeterminate bar (running, amount unknown). */
  readonly value: number | null;
  /** What the bar means, in words (also its text content for browsers without `<progress>`). */
  readonly text: string;
}

const clampPercent = (value: number): number => Math.max(0, Math.min(100, Math.round(value)));

const commitsText = (count: number | null): string =>
  count === null ? '' : `, ${count.toLocaleString('en-US')} ${count === 1 ? 'commit' : 'commits'}`;

/** One progress bar per step, from the import's status and its recorded progress. */
export function stepViews(record: Import): StepView[] {
  const current = currentStep(record);
  const currentIndex = current === 'done' ? STEPS.length : STEPS.indexOf(current);
  return STEPS.map((step, index): StepView => {
    const name = STEP_NAMES[step];
    if (index < currentIndex) {
      const text = step === 'raw' ? `Done${commitsText(record.commitCount)}` : 'Done';
      return { step, name, state: 'done', value: 100, text };
    }
    if (index > currentIndex) return { step, name, state: 'pending', value: 0, text: 'Not started' };
    if (record.status === 'error') return { step, name, state: 'failed', value: 0, text: 'Failed' };
    if (record.status === 'detection_found_nothing')
      return { step, name, state: 'failed', value: 0, text: 'Nothing found' };
    const waiting =
      record.status === 'auth_failed' ||
      record.status === 'detection_needs_auth' ||
      record.status === 'detection_found_multiple' ||
      record.waitingFor !== undefined;
    const value =
      step === 'raw' && record.percent !== null
        ? clampPercent(record.percent)
        : step === 'push' && record.pushPercent !== null
          ? clampPercent(record.pushPercent)
          : null;
    const amount = value === null ? '' : `${value}%`;
    const extra = step === 'raw' ? commitsText(record.commitCount) : '';
    if (waiting) {
      const why = waitingText(record);
      return {
        step,
        name,
        state: 'waiting',
        value,
        text: `Waiting for you: ${why}${amount ? ` (${amount})` : ''}`,
      };
    }
    return {
      step,
      name,
      state: 'running',
      value,
      text: `${amount || 'In progress'}${extra}`,
    };
  });
}

function waitingText(record: Import): string {
  if (record.status === 'detection_found_multiple' || record.waitingFor === 'project_choice')
    return 'choose a project';
  if (record.waitingFor === 'lfs_choice') return 'choose how to store large files';
  return 'a username and password for the origin';
}

/** What the status means and what to do about it, in plain words. */
export function statusExplanation(record: Import, repo: RepoName): string {
  const full = `${repo.owner}/${repo.repo}`;
  switch (record.status) {
    case 'detecting':
      return 'The service is finding out what kind of repository is at the URL.';
    case 'importing':
      return record.waitingFor === 'lfs_choice'
        ? 'The history has files over the size limit. Choose below whether to keep them as Git LFS objects or to remove them; the import continues after your choice.'
        : 'The history is being copied from the origin. Large histories take a while: you can leave this page and come back.';
    case 'mapping':
      return 'The history is being rewritten with your author mappings and your choice for large files.';
    case 'pushing':
      return `The imported history is being published to ${full}.`;
    case 'complete':
      return `${full} now has the imported history. You can still map authors or change the large-file choice (the history is rewritten and published again) until you push commits of your own.`;
    case 'auth_failed':
      return 'The origin refused to let the service read it. Enter a username and password (or token) for the origin below, and the import continues.';
    case 'detection_needs_auth':
      return 'The origin needs a username and password (or token) before the service can tell what it holds. Enter them below.';
    case 'detection_found_nothing':
      return 'No Git, Subversion, Mercurial or TFVC repository was found at this URL. Check the URL: cancel this import and start a new one with the right address (restarting tries the same URL again).';
    case 'detection_found_multiple':
      return 'Several projects were found at this URL. Choose the one to import below.';
    case 'error': {
      const step = record.failedStep ? STEP_NAMES[record.failedStep].toLowerCase() : 'an unknown';
      return `The import failed during the ${step} step. Restart it to try again, or cancel it.`;
    }
  }
}

const LFS_TEXT: Readonly<Record<UseLfs, string>> = {
  undecided: 'not chosen yet',
  opt_in: 'keep large files as Git LFS objects',
  opt_out: 'remove large files from the history',
};

/**
 * Author rows per page of the progress page (`?page=`): a row with its form is about 1 KB, so a
 * page stays far below the function's 6 MB answer whatever the number of authors.
 */
export const AUTHORS_SHOWN = 100;

/** A refused form: messages for the box at the top, and what the user typed into an author form. */
export interface PageProblems {
  readonly messages: readonly string[];
  readonly author?: { readonly id: number; readonly name: string; readonly email: string };
}

export interface ImportPageData {
  readonly repo: RepoName;
  readonly record: Import;
  /** The page of authors shown (`authorsPage`) and how many there are in all. */
  readonly authors: Page<ImportAuthor>;
  readonly authorsPage: PageRequest;
  /** The authors filter (`?authors=`; empty: every author). */
  readonly authorsFilter?: string;
  readonly largeFiles: readonly LargeFile[];
  readonly report: ImportReport;
  /** Entries in the revision map (origin revision → published commit). */
  readonly revisionCount: number;
  /** Whether the repository follows its origin (the sync resource). */
  readonly sync: ImportSync;
}

function statusRegion(data: ImportPageData): Html {
  const { record, repo } = data;
  const failure =
    record.status === 'error' && record.errorMessage
      ? html`<p><strong>What went wrong:</strong> ${record.errorMessage}</p>`
      : undefined;
  return html`<div id="import-status" class="panel" role="status" aria-live="polite" aria-atomic="true" data-live data-status="${record.status}" data-final="${isFinalStatus(record.status) ? 'true' : 'false'}">
  <p><strong>${statusText(record.status)}</strong></p>
  <p>${statusExplanation(record, repo)}</p>
  ${failure}
</div>`;
}

function progressRegion(record: Import): Html {
  const steps = stepViews(record).map((step) => {
    const id = `progress-${step.step}`;
    const bar =
      step.value === null
        ? html`<progress id="${id}" max="100" aria-describedby="${id}-text">${step.text}</progress>`
        : html`<progress id="${id}" max="100" value="${step.value}" aria-describedby="${id}-text">${step.text}</progress>`;
    return html`<li data-state="${step.state}"><label for="${id}"><span>${step.name}</span> <span id="${id}-text" class="muted">${step.text}</span></label>${bar}</li>`;
  });
  return html`<section id="import-progress" data-live aria-labelledby="progress-heading">
<h2 id="progress-heading">Progress</h2>
<ol class="steps">${steps}</ol>
</section>`;
}

function credentialsForm(request: WebRequest, repo: RepoName): Html {
  return html`<form method="post" action="${paths.credentials(repo)}" class="panel" aria-labelledby="credentials-heading">
  <h2 id="credentials-heading">Credentials for the origin</h2>
  ${csrfField(request.csrf)}
  <label for="vcs-username">Username</label>
  <input type="text" id="vcs-username" name="vcs_username" required maxlength="${MAX_VCS_USERNAME_LENGTH}" autocomplete="username" spellcheck="false">
  <label for="vcs-password">Password or token</label>
  <input type="password" id="vcs-password" name="vcs_password" required maxlength="${MAX_VCS_PASSWORD_LENGTH}" autocomplete="current-password">
  <p class="muted">They are stored encrypted, used only to read the origin, and never shown again.</p>
  <div class="actions"><button type="submit" class="primary">Send credentials</button></div>
</form>`;
}

function projectForm(request: WebRequest, data: ImportPageData): Html {
  const choices = (data.record.projectChoices ?? []).map(
    (choice, index) =>
      html`<li><label for="project-${index}"><input type="radio" id="project-${index}" name="choice" value="${index}" required${index === 0 ? html` checked` : ''}> <span>${choice.humanName}</span> <span class="muted">(${choice.vcs}${choice.tfvcProject ? html`, project ${choice.tfvcProject}` : ''})</span></label></li>`,
  );
  return html`<form method="post" action="${paths.project(data.repo)}" class="panel" aria-labelledby="project-heading">
  <h2 id="project-heading">Choose a project</h2>
  ${csrfField(request.csrf)}
  <fieldset><legend>Projects found at the URL</legend><ul class="scopes">${choices}</ul></fieldset>
  <div class="actions"><button type="submit" class="primary">Import this project</button></div>
</form>
${batchForm(request, data)}`;
}

/**
 * Several projects at once (`import-batch.ts`): every project with a box to tick and its new
 * repository's name (derived, editable); the first one imported goes into this repository.
 */
function batchForm(request: WebRequest, data: ImportPageData): Html {
  const choices = data.record.projectChoices ?? [];
  const rows = choices.map(
    (choice, index) =>
      html`<tr><td><input type="checkbox" id="batch-project-${index}" name="project" value="${index}" checked><input type="hidden" name="project-name-${index}" value="${choice.humanName}"></td><td><label for="batch-project-${index}">${choice.humanName}</label></td><td><label class="visually-hidden" for="batch-name-${index}">Repository for ${choice.humanName}</label><input type="text" id="batch-name-${index}" name="name-${index}" value="${derivedRepositoryName(choice.humanName)}" maxlength="100" pattern="[A-Za-z0-9._\-]{1,100}" spellcheck="false"></td></tr>`,
  );
  return html`<form method="post" action="${paths.batch(data.repo)}" class="panel" aria-labelledby="batch-heading">
  <h2 id="batch-heading">Import several projects, one repository each</h2>
  ${csrfField(request.csrf)}
  <input type="hidden" name="count" value="${choices.length}">
  <p class="muted">The first project ticked goes into ${data.repo.owner}/${data.repo.repo} (the name beside it is not used); each other one into a new repository of the name beside it.</p>
  <table class="projects"><thead><tr><th scope="col">Import</th><th scope="col">Project</th><th scope="col">Repository</th></tr></thead><tbody>${rows}</tbody></table>
  <div class="actions wrap"><button type="submit" name="scope" value="all">Import all ${choices.length}</button> <button type="submit" name="scope" value="ticked" class="primary">Import the ones ticked</button></div>
</form>`;
}

/** Forms the status asks for: credentials, or a project choice. */
function waitingRegion(request: WebRequest, data: ImportPageData): Html {
  const { status } = data.record;
  const form = acceptsCredentials(status)
    ? credentialsForm(request, data.repo)
    : acceptsProjectChoice(status)
      ? projectForm(request, data)
      : undefined;
  return html`<div id="import-waiting" data-live>${form}</div>`;
}

function authorRow(
  request: WebRequest,
  data: ImportPageData,
  author: ImportAuthor,
  problems?: PageProblems,
): Html {
  const typed = problems?.author?.id === author.id ? problems.author : undefined;
  const id = `author-${author.id}`;
  const who = author.remoteName || author.remoteId;
  return html`<tr id="${id}" data-live>
  <td id="${id}-remote">${author.remoteName}<br><code class="muted">${author.remoteId}</code></td>
  <td>${author.name}<br><span class="muted">${author.email}</span></td>
  <td><form method="post" action="${paths.author(data.repo, author.id)}">
    ${csrfField(request.csrf)}
    <label for="${id}-name">Name<span class="visually-hidden"> for ${who}</span></label>
    <input type="text" id="${id}-name" name="name" value="${typed?.name ?? author.name}" autocomplete="off">
    <label for="${id}-email">Email<span class="visually-hidden"> for ${who}</span></label>
    <input type="email" id="${id}-email" name="email" value="${typed?.email ?? author.email}" autocomplete="off">
    <div class="actions"><button type="submit">Map<span class="visually-hidden"> ${who}</span></button></div>
  </form></td>
</tr>`;
}

/** Links to the previous and next pages of authors, when there are any. */
function authorsNav(data: ImportPageData): Html | undefined {
  const { page, perPage } = data.authorsPage;
  const last = Math.max(1, Math.ceil(data.authors.total / perPage));
  if (last === 1 && page === 1) return undefined;
  const filter = data.authorsFilter ? `&${AUTHORS_FILTER}=${encodeURIComponent(data.authorsFilter)}` : '';
  const at = (n: number) => `${paths.page(data.repo)}?page=${n}${filter}`;
  const prev =
    page > 1 ? html`<a href="${at(Math.min(page - 1, last))}" rel="prev">Previous authors</a>` : undefined;
  const next = page < last ? html`<a href="${at(page + 1)}" rel="next">Next authors</a>` : undefined;
  return html`<nav aria-label="Pages of authors"><p class="muted">Page ${page} of ${last}. ${prev} ${next}</p></nav>`;
}

function authorsRegion(request: WebRequest, data: ImportPageData, problems?: PageProblems): Html {
  const { items, total } = data.authors;
  const filter = data.authorsFilter ?? '';
  const table =
    items.length === 0
      ? html`<p class="muted">${filter === '' ? 'No authors on this page.' : 'No author matches the filter.'}</p>`
      : html`<table>
<caption class="visually-hidden">Authors of the imported commits</caption>
<thead><tr><th scope="col">Author in the origin</th><th scope="col">Name and email in this repository</th><th scope="col">Map to</th></tr></thead>
<tbody>${items.map((author) => authorRow(request, data, author, problems))}</tbody>
</table>${authorsNav(data)}`;
  const body =
    total === 0 && filter === ''
      ? html`<p class="muted">No authors yet: they appear while the history is imported.</p>`
      : html`<p class="muted">Change how an author’s commits are attributed: the history is rewritten with the new name and email.</p>
${authorsTools(request, data.repo, filter, filter === '' ? undefined : total)}
${table}`;
  return html`<section id="import-authors" data-live aria-labelledby="authors-heading">
<h2 id="authors-heading">Authors (${filter === '' ? total : data.record.authorsCount})</h2>
${body}
</section>`;
}

function lfsForm(request: WebRequest, data: ImportPageData): Html {
  const current = data.record.useLfs;
  const option = (value: 'opt_in' | 'opt_out', text: string) =>
    html`<li><label for="use-lfs-${value}"><input type="radio" id="use-lfs-${value}" name="use_lfs" value="${value}" required${current === value ? html` checked` : ''}> <span>${text}</span></label></li>`;
  return html`<form method="post" action="${paths.lfs(data.repo)}" class="panel" aria-labelledby="lfs-heading">
  <h3 id="lfs-heading">Large files</h3>
  ${csrfField(request.csrf)}
  <p>Current choice: <strong>${LFS_TEXT[current]}</strong>.</p>
  <fieldset><legend>How to store files over the size limit</legend><ul class="scopes">
    ${option('opt_in', 'Keep them, stored with Git LFS (clones need git-lfs to get their content)')}
    ${option('opt_out', 'Remove them from the history')}
  </ul></fieldset>
  <div class="actions"><button type="submit" class="primary">Save large-file choice</button></div>
</form>`;
}

/** Entries in one CSV download of the revision map (about 0.8 MB: far under Lambda's 6 MB). */
export const REVISIONS_PER_CSV = 10_000;

/** The revision map as CSV downloads, one per `REVISIONS_PER_CSV` entries. */
function revisionsRegion(data: ImportPageData): Html {
  const { revisionCount: total, repo } = data;
  if (total === 0) return html`<section id="import-revisions" data-live hidden></section>`;
  const parts = Math.ceil(total / REVISIONS_PER_CSV);
  const links = Array.from({ length: parts }, (_, index) => {
    const first = index * REVISIONS_PER_CSV + 1;
    const last = Math.min(total, (index + 1) * REVISIONS_PER_CSV);
    return html`<li><a href="${paths.revisionsCsv(repo, index + 1)}" download>Revisions ${first}–${last} (CSV)</a></li>`;
  });
  return html`<section id="import-revisions" data-live aria-labelledby="revisions-heading">
<h2 id="revisions-heading">Revision map (${total})</h2>
<p class="muted">Each origin revision and the commit it became, as <code>origin_revision,commit</code>, in origin order: for rewriting links in issue trackers.</p>
<ul>${links}</ul>
</section>`;
}

function largeFilesRegion(request: WebRequest, data: ImportPageData): Html {
  const { record, largeFiles } = data;
  if (!record.hasLargeFiles) return html`<section id="import-large-files" data-live hidden></section>`;
  const rows = largeFiles.map(
    (file) =>
      html`<tr><td><code>${file.refName}</code></td><td><code>${file.path}</code></td><td>${formatBytes(file.size)}</td><td><code title="${file.oid}">${file.oid.slice(0, 12)}</code></td></tr>`,
  );
  return html`<section id="import-large-files" data-live aria-labelledby="large-files-heading">
<h2 id="large-files-heading">Files over the size limit (${record.largeFilesCount}, ${formatBytes(record.largeFilesSize)})</h2>
<table>
<caption class="visually-hidden">Large files in the history</caption>
<thead><tr><th scope="col">Ref</th><th scope="col">Path</th><th scope="col">Size</th><th scope="col">Object</th></tr></thead>
<tbody>${rows}</tbody>
</table>
${lfsForm(request, data)}
</section>`;
}

function actionsRegion(request: WebRequest, repo: RepoName): Html {
  return html`<section aria-labelledby="actions-heading">
<h2 id="actions-heading">Start over</h2>
<p class="muted">Restart imports the same URL again from the beginning. Cancel stops the import and removes everything it made; the repository is left empty.</p>
<div class="actions">
  <form method="post" action="${paths.restart(repo)}">${csrfField(request.csrf)}<button type="submit">Restart import</button></form>
  <form method="post" action="${paths.cancel(repo)}">${csrfField(request.csrf)}<button type="submit" class="danger">Cancel import</button></form>
</div>
</section>`;
}

function problemsBox(problems: PageProblems | undefined): Html | undefined {
  if (!problems || problems.messages.length === 0) return undefined;
  return html`<div class="error" role="alert"><p>That did not work:</p><ul>${problems.messages.map(
    (message) => html`<li>${message}</li>`,
  )}</ul></div>`;
}

/** GET (and refused POSTs of) /:owner/:repo/import. */
export function importPage(
  request: WebRequest,
  data: ImportPageData,
  options: { readonly status?: number; readonly problems?: PageProblems } = {},
): WebPage {
  const { record, repo } = data;
  const final = isFinalStatus(record.status);
  return {
    status: options.status ?? 200,
    title: `Import · ${repo.owner}/${repo.repo}`,
    scriptHashes: [LIVE_SCRIPT_HASH],
    body: html`<h1>Import into ${repo.owner}/${repo.repo}</h1>
<p class="muted">From <code>${record.vcsUrl}</code>${record.vcs ? html` (${record.vcs})` : undefined}.</p>
${noticeBox(options.problems ? undefined : request.query.notice)}
${problemsBox(options.problems)}
${statusRegion(data)}
${
  final
    ? undefined
    : html`<noscript><p><a href="${paths.page(repo)}">Refresh</a> to see the latest progress (with JavaScript on, this page updates itself).</p></noscript>`
}
${waitingRegion(request, data)}
${progressRegion(record)}
${reportRegion(data.report)}
${largeFilesRegion(request, data)}
${followingRegion(request, repo, record, data.sync)}
${revisionsRegion(data)}
${authorsRegion(request, data, options.problems)}
${actionsRegion(request, repo)}
${liveScript()}`,
  };
}

/** The answer when there is no import the signed-in user may see (the same for every reason). */
export function noImportPage(repo: RepoName): WebPage {
  return {
    status: 404,
    title: 'Not Found',
    body: html`<h1>Not Found</h1>
<p>There is no import for ${repo.owner}/${repo.repo} that you can see. Cancelled imports are removed; an import is started from <a href="${pathTo('new-import/form')}">the import form</a> or with the API (<code>PUT /repos/${repo.owner}/${repo.repo}/import</code>).</p>
<p><a href="/">Your repositories</a></p>`,
  };
}
