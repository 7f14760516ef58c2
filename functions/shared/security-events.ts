/**
 * The security log's contract on EventBridge (docs/api.md, "Security log"): every event of a
 * person's security log is put on the default bus with this `source` and `detail-type`, the detail
 * being the event as `GET /user/security-log` shows it. The publisher (`services/security-log.ts`)
 * and the grant that lets route functions put them (`lib/cdk/security-events.ts`) read these.
 */

/** Every security event's `source` (never `aws.`-prefixed). */
export const SECURITY_EVENT_SOURCE = 'oauth-import-service.security';

/** The one `detail-type`; the detail's `action` says which event it is. */
export const SECURITY_EVENT_TYPE = 'Security Log Event';
