import { SECURITY_EVENT_SOURCE } from '#shared/security-events';
import { type EventPublisher, grantPutEvents } from './import-events.ts';

/**
 * What records security events needs to announce them (`services/security-log.ts`):
 * `events:PutEvents` on the account's default event bus, for the security log's own `source`
 * only. Every route function gets it (any request with credentials may fail a sign-in; pages sign
 * in, tokens and grants change, imports start), and so do the workflow's steps, the scheduler (a
 * batch's queued imports start, and follow, from there) and the Git front end's task (a push or a
 * clone with a wrong password is a failed sign-in).
 */
export const grantPutSecurityEvents = (publisher: EventPublisher): void =>
  grantPutEvents(publisher, SECURITY_EVENT_SOURCE);
