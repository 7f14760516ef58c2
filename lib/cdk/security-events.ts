import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SECURITY_EVENT_SOURCE } from '#shared/security-events';
import { grantPutEvents } from './import-events.ts';

/**
 * What a function that records security events needs to announce them
 * (`services/security-log.ts`): `events:PutEvents` on the account's default event bus, for the
 * security log's own `source` only. Every route function gets it (any request with credentials may
 * fail a sign-in; pages sign in, tokens and grants change, imports start), and so do the workflow's
 * steps and the scheduler (a batch's queued imports start, and follow, from there).
 */
export const grantPutSecurityEvents = (fn: IFunction): void => grantPutEvents(fn, SECURITY_EVENT_SOURCE);
