/**
 * Import events on EventBridge (docs/importing.md, "Import events on EventBridge"): after a write that changed an import's
 * status, one `Import Status Changed` event, and with an outcome (complete, error, a sync refused)
 * its outcome's event too; `Import Cancelled` when the import is deleted. The detail is the import
 * as `GET …/import` shows it (never credentials: that JSON has none) with the attempt it is about.
 * Publishing never fails the caller: an event that could not be put is logged and counted
 * (`ImportEventNotPublished`).
 *
 * Each event carries `event_id`, derived from what it announces (`#domain/event-identity`): a
 * step that runs again after its worker died announces the change it finds already made once
 * more (`statusAnnouncedAgain`), under the same `event_id`, and receivers drop the copy
 * (EventBridge's own `id` is new on every PutEvents entry, and PutEvents takes no client id).
 */
import { getImport } from '#data/imports/items';
import { attemptOutcomeId, statusEventId } from '#domain/event-identity';
import { importJson } from '#domain/import-json';
import { executionName, type Import, type ImportStatus } from '#domain/imports';
import { config } from '#shared/config';
import { IMPORT_EVENT_SOURCE, IMPORT_EVENT_TYPE, type ImportEventType } from '#shared/import-events';
import { countSignal, log } from '#shared/log';
import { type BusEntry, MAX_ENTRY_BYTES, putEvents } from './event-bus.ts';

/** Which attempt a change belongs to, and whether that attempt syncs a followed origin. */
export interface AttemptOf {
  readonly attempt?: number;
  readonly sync?: boolean | undefined;
}

/** The detail of every import event. */
export interface ImportEventDetail {
  /** The event's own identity, the same in every copy of it (a UUID). */
  readonly event_id: string;
  readonly owner: string;
  readonly repo: string;
  readonly attempt: number;
  /** The Step Functions execution of the attempt (`owner.repo.attempt-N` or `owner.repo.sync-N`). */
  readonly execution_name: string;
  readonly sync: boolean;
  /** The status before the change (null when the import just began; the cancelled one's last). */
  readonly previous_status: ImportStatus | null;
  readonly import: Record<string, unknown>;
}

/** The public addresses the import JSON names; set for every function (relative paths otherwise). */
const urls = () => ({ api: config().baseUrl ?? '', import: config().importUrl ?? '' });

/** The execution's name: the recorded ARN's last part, else derived as the API derives it. */
const executionOf = (record: Import, sync: boolean): string =>
  record.executionArn?.split(':').at(-1) ??
  executionName(record.ownerLogin, record.repoName, record.attempt, sync ? 'sync' : 'attempt');

export function detailOf(
  record: Import,
  previous: ImportStatus | null,
  sync: boolean,
  eventId: string,
): ImportEventDetail {
  return {
    event_id: eventId,
    owner: record.ownerLogin,
    repo: record.repoName,
    attempt: record.attempt,
    execution_name: executionOf(record, sync),
    sync,
    previous_status: previous,
    import: importJson(record, urls()),
  };
}

/** The outcome an import's new status is, if any. */
function outcomeOf(status: ImportStatus, sync: boolean): ImportEventType | undefined {
  if (status === 'complete') return sync ? IMPORT_EVENT_TYPE.syncCompleted : IMPORT_EVENT_TYPE.completed;
  if (status === 'error') return sync ? IMPORT_EVENT_TYPE.syncFailed : IMPORT_EVENT_TYPE.failed;
  if (status === 'auth_failed' && sync) return IMPORT_EVENT_TYPE.syncFailed;
  return undefined;
}

/**
 * An entry within PutEvents' 256 KB: the only unbounded part of the import JSON, its
 * `project_choices`, is left out (`project_choices_omitted`) when the whole would not fit.
 */
export function entryOf(detailType: ImportEventType, detail: ImportEventDetail): BusEntry {
  const entry = { source: IMPORT_EVENT_SOURCE, detailType, detail: JSON.stringify(detail) };
  if (Buffer.byteLength(entry.detail) + 200 <= MAX_ENTRY_BYTES) return entry;
  const { project_choices: _, ...rest } = detail.import;
  return {
    ...entry,
    detail: JSON.stringify({ ...detail, import: { ...rest, project_choices_omitted: true } }),
  };
}

async function publish(entries: readonly BusEntry[]): Promise<void> {
  let failed: number;
  try {
    failed = await putEvents(entries);
  } catch (error) {
    log('warn', 'import events not published', { error: (error as Error).name, count: entries.length });
    failed = entries.length;
  }
  for (let n = 0; n < failed; n++) countSignal('ImportEventNotPublished');
}

/**
 * After a write that may have moved the import's status away from `previous`: reads the import
 * (unless the write answered with it: `written`) and, when its status differs (and, given
 * `attempt`, it is still that attempt's), publishes the change and any outcome. Never throws.
 */
export async function statusChanged(
  owner: string,
  repo: string,
  previous: ImportStatus | null,
  of: AttemptOf = {},
  written?: Import,
): Promise<void> {
  let record: Import | undefined = written;
  try {
    record ??= await getImport(owner, repo);
  } catch (error) {
    log('warn', 'import events not published', { error: (error as Error).name });
    countSignal('ImportEventNotPublished');
    return;
  }
  if (!record || record.status === previous) return;
  if (of.attempt !== undefined && record.attempt !== of.attempt) return;
  await announce(record, previous, of.sync === true);
}

/** The status change the import's item last counted, with its outcome, under their identities. */
async function announce(record: Import, previous: ImportStatus | null, sync: boolean): Promise<void> {
  const change = {
    owner: record.ownerLogin,
    repo: record.repoName,
    importId: record.importId,
    attempt: record.attempt,
    sync,
    sequence: record.statusSequence ?? 0,
    previous,
    status: record.status,
  };
  const outcome = outcomeOf(record.status, sync);
  const entry = (type: ImportEventType) =>
    entryOf(type, detailOf(record, previous, sync, statusEventId(change, type)));
  await publish([entry(IMPORT_EVENT_TYPE.statusChanged), ...(outcome ? [entry(outcome)] : [])]);
}

/**
 * A step run again that finds the status it enters already entered (its first run wrote it and
 * may have died before it announced it): the change the item last counted is announced again,
 * under the same `event_id`s, when it is this attempt's and moved to `status`. Never throws.
 */
export async function statusAnnouncedAgain(
  record: Import,
  status: ImportStatus,
  of: Required<AttemptOf>,
): Promise<void> {
  const last = record.lastStatusChange;
  if (record.attempt !== of.attempt || record.status !== status) return;
  if (last?.attempt !== of.attempt || last.to !== status) return;
  await announce(record, last.from, of.sync === true);
}

/** After `DELETE …/import`: the import as it last was. Never throws. */
export async function importCancelled(record: Import): Promise<void> {
  const sync = record.executionArn?.includes('.sync-') === true;
  const id = attemptOutcomeId(
    { owner: record.ownerLogin, repo: record.repoName, importId: record.importId, attempt: record.attempt },
    'cancelled',
    IMPORT_EVENT_TYPE.cancelled,
  );
  await publish([entryOf(IMPORT_EVENT_TYPE.cancelled, detailOf(record, record.status, sync, id))]);
}
