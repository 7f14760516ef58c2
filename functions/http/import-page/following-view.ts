import {
  type ImportSync,
  type LastSync,
  MAX_SYNC_INTERVAL_MINUTES,
  MIN_SYNC_INTERVAL_MINUTES,
  nextSyncAt,
} from '#domain/import-sync';
import type { Import } from '#domain/imports';
import type { WebPage, WebRequest } from '#http/middleware/web-stack';
import { type Html, html } from '#shared/html';
import { csrfField } from '#shared/page-layout';
import { paths, type RepoName } from './paths.ts';

/*
 * The progress page's "Following the origin" section (issue 27) and the cut-over confirmation:
 * pure views over the sync resource, the same one `GET …/import/sync` answers. Its forms post to
 * the page's own routes, which call the services behind `PUT`, `POST` and `DELETE …/import/sync`.
 */

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

const two = (n: number) => String(n).padStart(2, '0');

/** `14 March 2025 at 09:30 UTC`: the same for every reader, whatever their time zone. */
export function timeWords(iso: string): string {
  const at = new Date(iso);
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()} at ${two(at.getUTCHours())}:${two(at.getUTCMinutes())} UTC`;
}

/** A time in words, machine-readable through `datetime`. */
const timeElement = (iso: string): Html => html`<time datetime="${iso}">${timeWords(iso)}</time>`;

const plural = (count: number, one: string, many: string) =>
  `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;

/** `every 60 minutes`, `every 2 hours`, `every day`…, or on demand only. */
export function scheduleWords(intervalMinutes: number | null): string {
  if (intervalMinutes === null) return 'On demand only: a sync starts when you press Sync now';
  if (intervalMinutes % 1440 === 0)
    return intervalMinutes === 1440 ? 'Every day' : `Every ${plural(intervalMinutes / 1440, 'day', 'days')}`;
  if (intervalMinutes % 60 === 0)
    return intervalMinutes === 60 ? 'Every hour' : `Every ${plural(intervalMinutes / 60, 'hour', 'hours')}`;
  return `Every ${plural(intervalMinutes, 'minute', 'minutes')}`;
}

/**
 * What the origin did to branches and tags in the last sync (deleted, or history rewritten with
 * the old tip kept as `backups/…`). `LastSync` does not carry these yet; when it does, their
 * sentences belong here, after the outcome.
 */
const refChangesWords = (_lastSync: LastSync): Html | undefined => undefined;

/** The last sync's outcome in words: its new commits, or its error in the tool's and origin's words. */
export function lastSyncWords(lastSync: LastSync | null): Html {
  if (lastSync === null) return html`No sync yet.`;
  const outcome =
    lastSync.status === 'failed'
      ? html`Failed: ${lastSync.errorMessage ?? 'no reason was recorded'}`
      : lastSync.newCommits === 0
        ? html`Succeeded: the origin had nothing new.`
        : html`Succeeded with ${plural(lastSync.newCommits, 'new commit', 'new commits')}.`;
  return html`${outcome}${refChangesWords(lastSync)}`;
}

function nextSyncWords(sync: ImportSync, now: number): Html {
  const next = nextSyncAt(sync);
  if (next === null) return html`None scheduled (on demand only).`;
  return Date.parse(next) <= now
    ? html`${timeElement(next)} (due: it starts within minutes)`
    : timeElement(next);
}

/**
 * What a sync does with a branch or tag the origin deletes while followed: the sync's own setting,
 * apart from the import's choice for refs deleted in the history (decision 0150).
 */
function deletedRefsWords(sync: ImportSync): Html {
  const keep = sync.keepDeletedRefs === true;
  return html`${keep ? 'Kept as backups under refs/backups/' : 'Deleted here too'} <span class="muted">(<code>keep_refs_deleted_while_following: ${String(keep)}</code>)</span>`;
}

const STATE_WORDS: Readonly<Record<ImportSync['state'], string>> = {
  off: 'Off',
  following: 'Following',
  cut_over: 'Cut over',
};

function stateExplanation(record: Import, sync: ImportSync): Html {
  switch (sync.state) {
    case 'off':
      return record.status === 'complete'
        ? html`The repository does not follow its origin. Follow it to bring in what is committed there until you switch to Git for good (the cut-over); meanwhile the repository is read-only.`
        : html`Once the import is complete, the repository can follow its origin until you cut over.`;
    case 'following':
      return html`The origin is the source of truth: its new history is brought in by each sync, and pushes to this repository are refused until you cut over.`;
    case 'cut_over':
      return html`Cut over on ${sync.cutOverAt ? timeElement(sync.cutOverAt) : 'an unknown date'}. The origin is no longer followed; the repository is yours, and pushes are accepted.`;
  }
}

/** The form that starts following, or changes the schedule while following. */
function followForm(request: WebRequest, repo: RepoName, sync: ImportSync): Html {
  const following = sync.state === 'following';
  const onDemand = following && sync.intervalMinutes === null;
  const minutes = sync.intervalMinutes ?? 60;
  return html`<form method="post" action="${paths.follow(repo)}" class="panel" aria-labelledby="follow-heading">
  <h3 id="follow-heading">${following ? 'Change the schedule' : 'Follow the origin'}</h3>
  ${csrfField(request.csrf)}
  <fieldset><legend>When to sync</legend><ul class="scopes">
    <li><label for="follow-scheduled"><input type="radio" id="follow-scheduled" name="schedule" value="interval" required${onDemand ? undefined : html` checked`}> <span>On a schedule</span></label>
      <label for="follow-interval">Minutes between syncs</label>
      <input type="number" id="follow-interval" name="interval_minutes" min="${MIN_SYNC_INTERVAL_MINUTES}" max="${MAX_SYNC_INTERVAL_MINUTES}" step="1" value="${minutes}" inputmode="numeric" aria-describedby="follow-interval-hint">
      <span id="follow-interval-hint" class="muted">At least ${MIN_SYNC_INTERVAL_MINUTES}.</span></li>
    <li><label for="follow-on-demand"><input type="radio" id="follow-on-demand" name="schedule" value="on_demand" required${onDemand ? html` checked` : undefined}> <span>On demand only (Sync now)</span></label></li>
  </ul></fieldset>
  <div class="actions"><button type="submit"${following ? undefined : html` class="primary"`}>${following ? 'Save schedule' : 'Follow the origin'}</button></div>
</form>`;
}

/** The section: state, schedule, last and next sync, the last outcome, and what can be done now. */
export function followingRegion(
  request: WebRequest,
  repo: RepoName,
  record: Import,
  sync: ImportSync,
  now = Date.now(),
): Html {
  const facts =
    sync.state === 'off'
      ? undefined
      : html`<dl>
  <dt>Schedule</dt><dd>${sync.state === 'following' ? scheduleWords(sync.intervalMinutes) : 'None (cut over)'}</dd>
  <dt>Last synced</dt><dd>${sync.lastSyncedAt ? timeElement(sync.lastSyncedAt) : 'Never'}</dd>
  <dt>Next sync</dt><dd>${sync.state === 'following' ? nextSyncWords(sync, now) : 'None (cut over)'}</dd>
  <dt>Outcome of the last sync</dt><dd id="following-last-sync">${lastSyncWords(sync.lastSync)}</dd>
  <dt>Branches and tags the origin deletes</dt><dd id="following-deleted-refs">${deletedRefsWords(sync)}</dd>
  ${sync.originRevision ? html`<dt>Newest origin revision published</dt><dd><code>${sync.originRevision}</code></dd>` : undefined}
</dl>`;
  const actions =
    sync.state === 'following'
      ? html`<div class="actions">
  <form method="post" action="${paths.syncNow(repo)}">${csrfField(request.csrf)}<button type="submit" class="primary">Sync now</button></form>
  <form method="post" action="${paths.cutOver(repo)}">${csrfField(request.csrf)}<button type="submit" class="danger">Cut over</button></form>
</div>
${followForm(request, repo, sync)}`
      : sync.state === 'off' && record.status === 'complete'
        ? followForm(request, repo, sync)
        : undefined;
  return html`<section id="import-following" data-live data-state="${sync.state}" aria-labelledby="following-heading">
<h2 id="following-heading">Following the origin</h2>
<p>State: <strong id="following-state">${STATE_WORDS[sync.state]}</strong>. ${stateExplanation(record, sync)}</p>
${facts}
${actions}
</section>`;
}

/** The confirmation a Cut over button leads to: what cut-over means, then the form that does it. */
export function cutOverConfirmation(request: WebRequest, repo: RepoName): WebPage {
  const full = `${repo.owner}/${repo.repo}`;
  return {
    title: `Cut over · ${full}`,
    body: html`<h1>Cut over ${full} from its origin?</h1>
<div class="panel" aria-labelledby="cut-over-meaning">
<h2 id="cut-over-meaning">What cut-over means</h2>
<ul>
  <li>The origin stops being followed: nothing committed there from now on comes into ${full}, neither on a schedule nor with Sync now.</li>
  <li>Pushes to ${full} are accepted: the repository is yours, and Git is its source of truth.</li>
  <li>It cannot be undone: the repository can never follow this origin again.</li>
</ul>
</div>
<form method="post" action="${paths.cutOver(repo)}">
  ${csrfField(request.csrf)}
  <input type="hidden" name="confirm" value="cut-over">
  <div class="actions"><button type="submit" class="danger">Cut over for good</button> <a href="${paths.page(repo)}">Keep following</a></div>
</form>`,
  };
}
