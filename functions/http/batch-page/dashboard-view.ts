import { batchCounts, dashboardOrder, entryGroup } from '#domain/batch-dashboard';
import { MAX_SYNC_INTERVAL_MINUTES, MIN_SYNC_INTERVAL_MINUTES } from '#domain/import-sync';
import type { WebPage, WebRequest } from '#http/middleware/web-stack';
import type { BatchDashboard } from '#services/import-batch-dashboard';
import type { BatchEntryView, EntryOutcome } from '#services/import-batches';
import { type Html, html } from '#shared/html';
import { csrfField } from '#shared/page-layout';
import { authorsFileInputs } from '../import-page/authors-view.ts';
import { timeWords } from '../import-page/following-view.ts';
import { paths } from '../import-page/paths.ts';
import {
  findingsCell,
  followingCell,
  inStepCell,
  lastSyncCell,
  percentOf,
  statusCell,
} from './entry-cells.ts';
import { batchPaths } from './paths.ts';

/*
 * The batch dashboard (issue 37, item 5): counts at the top, the actions on all imports, then one
 * compact row per import, problems first. Every value goes through `html`. Works without
 * JavaScript: each action is a plain form with the session's CSRF token.
 */

/** What a redirect after an action on all says (`?notice=<key>&done=N&skipped=N`): fixed sentences and two numbers. */
const NOTICES = {
  'sync-started': (done: number, skipped: number) =>
    `A sync started for ${done} ${done === 1 ? 'import' : 'imports'}${skipped > 0 ? `; ${skipped} had nothing to sync (not following, or still importing)` : ''}.`,
  schedule: (done: number, skipped: number) =>
    `${done} ${done === 1 ? 'import follows' : 'imports follow'} the new schedule${skipped > 0 ? `; ${skipped} will when they are complete, or have been cut over` : ''}.`,
  'cut-over': (done: number, skipped: number) =>
    `${done} ${done === 1 ? 'import was' : 'imports were'} cut over${skipped > 0 ? `; ${skipped} had nothing to cut over` : ''}.`,
} as const;

export type BatchNoticeKey = keyof typeof NOTICES;

const count = (value: string | undefined) =>
  value !== undefined && /^\d{1,4}$/.test(value) ? Number(value) : 0;

function noticeBox(query: Readonly<Record<string, string | undefined>>): Html | undefined {
  const key = query.notice;
  if (key === undefined || !Object.hasOwn(NOTICES, key)) return undefined;
  const words = NOTICES[key as BatchNoticeKey](count(query.done), count(query.skipped));
  return html`<div id="batch-notice" class="notice" role="status"><p>${words}</p></div>`;
}

/** A refused action on all: its message and, per import, why it refused. */
export interface OutcomeProblems {
  readonly message: string;
  /** Problems of the request itself (an authors file's bad lines), one item each. */
  readonly details?: readonly string[];
  readonly failed: readonly EntryOutcome[];
  readonly done?: number;
}

function problemsBox(problems: OutcomeProblems | undefined): Html | undefined {
  if (!problems) return undefined;
  const items = problems.failed.map(
    (outcome) =>
      html`<li><strong>${outcome.repository}</strong>: ${outcome.message ?? `refused (${outcome.status ?? 'no status'})`}</li>`,
  );
  for (const detail of problems.details ?? []) items.push(html`<li>${detail}</li>`);
  const done = problems.done ? html`<p>The other ${problems.done} took it.</p>` : undefined;
  return html`<div id="batch-problems" class="error" role="alert"><p>${problems.message}</p>${items.length > 0 ? html`<ul>${items}</ul>` : ''}${done}</div>`;
}

function countsList(data: BatchDashboard): Html {
  const counts = batchCounts(
    data.view.entries.map((view) => ({ ...view.entry, record: view.record, sync: view.sync })),
  );
  const item = (id: string, value: number, words: string) =>
    html`<li id="count-${id}"><strong>${value}</strong> ${words}</li>`;
  return html`<ul class="counts" aria-label="Imports by state">
  ${item('complete', counts.complete, 'complete')}
  ${item('running', counts.running, 'importing')}
  ${item('queued', counts.queued, 'queued')}
  ${item('problem', counts.problem, counts.problem === 1 ? 'needs attention' : 'need attention')}
  ${item('following', counts.following, 'following')}
  ${item('cut-over', counts.cutOver, 'cut over')}
  ${counts.cancelled > 0 ? item('cancelled', counts.cancelled, 'cancelled') : ''}
</ul>`;
}

function followForm(request: WebRequest, data: BatchDashboard): Html {
  const follow = data.view.batch.options.follow;
  const onDemand = follow !== null && follow.intervalMinutes === null;
  const minutes = follow?.intervalMinutes ?? 60;
  return html`<form method="post" action="${batchPaths.follow(data.view.batch.id)}" aria-labelledby="batch-follow-heading">
  <h3 id="batch-follow-heading">Follow, or change the interval</h3>
  ${csrfField(request.csrf)}
  <div class="form-row">
    <label for="batch-scheduled"><input type="radio" id="batch-scheduled" name="schedule" value="interval"${onDemand ? '' : html` checked`}> <span>Every</span></label>
    <label for="batch-interval"><span class="visually-hidden">Minutes between syncs</span><input type="number" id="batch-interval" name="interval_minutes" min="${MIN_SYNC_INTERVAL_MINUTES}" max="${MAX_SYNC_INTERVAL_MINUTES}" step="1" value="${minutes}" inputmode="numeric"> <span>minutes</span></label>
    <label for="batch-on-demand"><input type="radio" id="batch-on-demand" name="schedule" value="on_demand"${onDemand ? html` checked` : ''}> <span>On demand only</span></label>
    <button type="submit">${follow ? 'Save interval' : 'Follow all'}</button>
  </div>
</form>`;
}

function revisionLinks(data: BatchDashboard): Html {
  if (data.revisionParts === 0)
    return html`<p class="muted" id="batch-revisions">Revision maps: none yet (each appears when its import is published).</p>`;
  const id = data.view.batch.id;
  const links = Array.from(
    { length: data.revisionParts },
    (_, n) =>
      html`<a href="${batchPaths.revisionsCsv(id, n + 1)}" download>${data.revisionParts === 1 ? 'Download (CSV)' : `Part ${n + 1} (CSV)`}</a>`,
  );
  return html`<p id="batch-revisions">Revision maps of all imports, ${data.revisionCount.toLocaleString('en-US')} revisions as <code>repository,origin_revision,commit</code>: ${links.map((link, n) => html`${n > 0 ? ' · ' : ''}${link}`)}</p>`;
}

/**
 * The actions that can do something now: Sync now and Cut over while an import follows; the
 * interval while one follows or could (complete and not following, or not complete yet).
 */
function actionsRegion(request: WebRequest, data: BatchDashboard): Html {
  const id = data.view.batch.id;
  const states = data.view.entries.map((view) => view.sync?.state ?? 'off');
  const following = states.includes('following');
  const couldFollow = data.view.entries.some(
    (view) =>
      view.entry.state === 'queued' || (view.record !== undefined && (view.sync?.state ?? 'off') === 'off'),
  );
  const buttons = following
    ? html`<div class="actions">
  <form method="post" action="${batchPaths.syncNow(id)}">${csrfField(request.csrf)}<button type="submit" class="primary">Sync now</button></form>
  <form method="post" action="${batchPaths.cutOver(id)}">${csrfField(request.csrf)}<button type="submit" class="danger">Cut over</button></form>
</div>`
    : html`<p class="muted">No import of the batch follows its origin${states.includes('cut_over') ? ' any more: those complete are cut over' : ''}.</p>`;
  return html`<section id="batch-actions" class="panel" aria-labelledby="batch-actions-heading">
<h2 id="batch-actions-heading">On all imports</h2>
${buttons}
${following || couldFollow ? followForm(request, data) : ''}
${revisionLinks(data)}
${authorsForm(request, data)}
</section>`;
}

/** One authors file for every complete import (the others are skipped and say why). */
function authorsForm(request: WebRequest, data: BatchDashboard): Html {
  return html`<form method="post" action="${batchPaths.authors(data.view.batch.id)}" enctype="multipart/form-data" class="panel" aria-labelledby="batch-authors-heading">
  <h3 id="batch-authors-heading">Authors file for all imports</h3>
  ${csrfField(request.csrf)}
  <p class="muted">Choose or paste a git-svn <code>authors.txt</code> (<code>login = Name &lt;email&gt;</code>) or a CSV (<code>origin,name,email</code>). It is checked once, then every complete import maps the authors it names and rewrites its history once; imports still queued or importing are skipped (send the file again once they are complete).</p>
  ${authorsFileInputs('batch-authors')}
  <div class="actions"><button type="submit" class="primary">Map authors in all imports</button></div>
</form>`;
}

/** A cell; `labelled` ones say their column's name in the narrow layout, `empty` ones are hidden there. */
function cell(label: string, content: Html, { labelled = false, empty = false, num = false } = {}): Html {
  const classes = [labelled ? 'labelled' : '', empty ? 'empty' : '', num ? 'num' : ''].filter(
    (name) => name !== '',
  );
  return html`<td data-label="${label}"${classes.length > 0 ? html` class="${classes.join(' ')}"` : ''}>${content}</td>`;
}

const NONE = html`<span class="muted">—</span>`;

function row(view: BatchEntryView, data: BatchDashboard, now: number): Html {
  const { entry, record, sync } = view;
  const owner = data.view.batch.ownerLogin;
  const group = entryGroup({ ...entry, record, sync });
  const percent = percentOf(view);
  const name = record
    ? html`<a href="${paths.page({ owner, repo: entry.repository })}">${entry.repository}</a>`
    : html`${entry.repository}`;
  const findings = record ? data.findings.get(record.importId) : undefined;
  const following = sync?.state === 'following';
  return html`<tr id="entry-${entry.index}" data-group="${group}" data-status="${record?.status ?? entry.state}" data-following="${sync?.state ?? 'off'}">
${cell('Repository', name)}
${cell('Status', statusCell(view))}
${cell('Done', percent === null ? NONE : html`${percent}%`, { num: true, empty: percent === null })}
${cell('Findings', record ? findingsCell(findings) : NONE, { labelled: true, empty: !record })}
${cell('Following', followingCell(sync, now))}
${cell('Last sync', lastSyncCell(sync, now), { labelled: true, empty: !sync?.lastSync })}
${cell('In step', inStepCell(sync, now), { labelled: true, empty: !following })}
</tr>`;
}

function entriesRegion(data: BatchDashboard, now: number): Html {
  const rows = dashboardOrder(
    data.view.entries.map((view) => ({ ...view.entry, record: view.record, sync: view.sync, view })),
  ).map((sorted) => row(sorted.view, data, now));
  return html`<section id="batch-imports" aria-labelledby="batch-imports-heading">
<h2 id="batch-imports-heading">Imports (${data.view.entries.length})</h2>
<p class="muted">Those that need attention first, then those importing, queued, and complete. “In step” is the last time the repository was known to match its origin: its last successful sync, or a later scheduled look that found nothing new.</p>
<table class="compact stack">
<caption class="visually-hidden">Every import of the batch</caption>
<thead><tr><th scope="col">Repository</th><th scope="col">Status</th><th scope="col">Done</th><th scope="col">Findings</th><th scope="col">Following</th><th scope="col">Last sync</th><th scope="col">In step</th></tr></thead>
<tbody>${rows}</tbody>
</table>
</section>`;
}

/** GET /imports/batches/:batch_id (and an action on all that some imports refused). */
export function dashboardPage(
  request: WebRequest,
  data: BatchDashboard,
  options: { readonly status?: number; readonly problems?: OutcomeProblems } = {},
  now = Date.now(),
): WebPage {
  const { batch } = data.view;
  return {
    status: options.status ?? 200,
    title: `Import batch ${batch.id}`,
    body: html`<div class="wide">
<p class="muted"><a href="${batchPaths.list()}">Your import batches</a></p>
<h1>Import batch ${batch.id}</h1>
<p class="muted">${batch.total} ${batch.total === 1 ? 'repository' : 'repositories'} of ${batch.ownerLogin}, started ${timeWords(batch.createdAt)}; ${batch.options.concurrency} ${batch.options.concurrency === 1 ? 'import' : 'imports'} at a time.</p>
${noticeBox(options.problems ? {} : request.query)}
${problemsBox(options.problems)}
${countsList(data)}
${actionsRegion(request, data)}
${entriesRegion(data, now)}
<p class="muted"><a href="${batchPaths.dashboard(batch.id)}">Refresh</a> to see the latest state (the page does not update itself).</p>
</div>`,
  };
}

/** The confirmation Cut over leads to: what cut-over means for every following import, then the form that does it. */
export function cutOverConfirmation(request: WebRequest, data: BatchDashboard): WebPage {
  const id = data.view.batch.id;
  const following = data.view.entries.filter((view) => view.sync?.state === 'following').length;
  return {
    title: `Cut over · import batch ${id}`,
    body: html`<h1>Cut over ${following} ${following === 1 ? 'repository' : 'repositories'} of batch ${id}?</h1>
<div class="panel" aria-labelledby="cut-over-meaning">
<h2 id="cut-over-meaning">What cut-over means</h2>
<ul>
  <li>Every import of the batch that follows its origin stops following it: nothing committed there from now on comes in.</li>
  <li>Pushes to those repositories are accepted: Git is their source of truth.</li>
  <li>It cannot be undone. An import still running is not cut over; cut it over from its own page later.</li>
</ul>
</div>
<form method="post" action="${batchPaths.cutOver(id)}">
  ${csrfField(request.csrf)}
  <input type="hidden" name="confirm" value="cut-over">
  <div class="actions"><button type="submit" class="danger">Cut over for good</button> <a href="${batchPaths.dashboard(id)}">Keep following</a></div>
</form>`,
  };
}
