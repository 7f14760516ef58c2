/**
 * The import events' contract on EventBridge (docs/importing.md, "Import events on EventBridge"): one `source` for every
 * event of the import API, and the `detail-type` of each kind. The publisher
 * (`services/import-events.ts`) and the grant that lets functions put them (`lib/cdk`) read these.
 */

/** Every import event's `source`: the service's name and the resource (never `aws.`-prefixed). */
export const IMPORT_EVENT_SOURCE = 'oauth-import-service.imports';

/** Each event's `detail-type`, as the EventBridge console lists them. */
export const IMPORT_EVENT_TYPE = {
  /** Every change of an import's `status` (its start, each step, its end), by any writer. */
  statusChanged: 'Import Status Changed',
  /** An import attempt (not a sync) reached `complete`. */
  completed: 'Import Completed',
  /** An import attempt (not a sync) ended in `error`. */
  failed: 'Import Failed',
  /** `DELETE …/import`: the import is gone; the detail holds it as it last was. */
  cancelled: 'Import Cancelled',
  /** A sync of a followed origin reached `complete`. */
  syncCompleted: 'Sync Completed',
  /** A sync ended in `error`, or its origin refused the credentials (`auth_failed`). */
  syncFailed: 'Sync Failed',
} as const;

export type ImportEventType = (typeof IMPORT_EVENT_TYPE)[keyof typeof IMPORT_EVENT_TYPE];
