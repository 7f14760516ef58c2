/**
 * Recording and reading a person's security log (`#domain/security-log` has the catalogue). An
 * event is written in the transaction of what it records where that is one transaction
 * (`securityEventItems`, then `announceSecurityEvents` once it committed), else after it, at least
 * once and once only (`recordSecurityEvent`: a deterministic id and a conditional marker). Every
 * event then goes to EventBridge for a SIEM, after the commit; a failure there is logged and
 * counted (`SecurityEventNotPublished`), never thrown: the person's request has done its work.
 * Who acted and from where come from the request scope (`#services/request-scope`).
 */
import { getApp } from '#data/apps';
import type { TransactItem } from '#data/client';
import {
  countFailedSignIn,
  putSecurityEventOnce,
  readSecurityEvents,
  securityEventPosition,
  securityEventPuts,
} from '#data/security-log';
import type { Authorization } from '#domain/authorizations';
import { nameUuid } from '#domain/event-identity';
import {
  FAILED_SIGN_IN_BUCKET_SECONDS,
  failedSignInBucket,
  isSecurityEventKind,
  type SecurityActor,
  type SecurityEvent,
  type SecurityEventKind,
  type SecuritySubject,
  securityEventId,
  securityEventJson,
  securityLogCursor,
  securityLogPosition,
  storedSecurityEvent,
} from '#domain/security-log';
import type { Caller } from '#services/authenticate';
import { validationFailed } from '#shared/errors';
import { countSignal, log } from '#shared/log';
import { SECURITY_EVENT_SOURCE, SECURITY_EVENT_TYPE } from '#shared/security-events';
import { busReachable, putEvents } from './event-bus.ts';
import { requestScope } from './request-scope.ts';

/** What an action says of its event; who and from where are the request's. */
export interface EventDraft {
  readonly kind: SecurityEventKind;
  /** Whose log it goes in. */
  readonly login: string;
  /** What makes this action this one (`securityEventId`): the same on a retry. */
  readonly identity: readonly (string | number)[];
  readonly subject?: SecuritySubject;
  /** Who acted, whatever the request scope says (a sign-in: the person signing in). */
  readonly actor?: SecurityActor;
  /** Who acted when there is no request (a workflow step); the admin CLI's otherwise. */
  readonly otherwise?: SecurityActor;
}

/** The caller of an API request as the security log names it. */
export function actorOf(caller: Caller): SecurityActor | undefined {
  if (caller.kind === 'user')
    return caller.via === 'token' && caller.token.clientId !== ''
      ? { kind: 'app', login: caller.user.login, clientId: caller.token.clientId, appName: null }
      : { kind: 'user', login: caller.user.login };
  if (caller.kind === 'app')
    return {
      kind: 'app',
      login: caller.token?.login ?? null,
      clientId: caller.app.clientId,
      appName: caller.app.name,
    };
  return undefined;
}

/** The event of `draft`, now, by the request's caller (an anonymous one when none is known). */
export function securityEvent(draft: EventDraft, createdAt = new Date().toISOString()): SecurityEvent {
  const scope = requestScope();
  return {
    id: securityEventId(draft.kind, draft.login, draft.identity),
    login: draft.login,
    kind: draft.kind,
    actor:
      draft.actor ??
      scope.actor ??
      (scope.inRequest ? { kind: 'anonymous' } : (draft.otherwise ?? { kind: 'admin' })),
    origin: scope.origin,
    createdAt,
    subject: draft.subject ?? {},
  };
}

/** An application acting through a token is named in its events (one read, on these actions only). */
async function withAppName(event: SecurityEvent): Promise<SecurityEvent> {
  const { actor } = event;
  if (actor.kind !== 'app' || actor.appName !== null) return event;
  const app = await getApp(actor.clientId);
  return { ...event, actor: { ...actor, appName: app?.name ?? null } };
}

/** `securityEvent`, with the name of the application acting, if one is (one read). */
export const namedSecurityEvent = (draft: EventDraft): Promise<SecurityEvent> =>
  withAppName(securityEvent(draft));

/** The items that write `event` in the transaction of what it records. */
export const securityEventItems = (event: SecurityEvent): TransactItem[] =>
  securityEventPuts(storedSecurityEvent(event));

/**
 * Puts events on EventBridge, each with its `event_id` (a SIEM drops a copy by it). Never throws.
 * `eventIds` overrides an event's id on the bus (each failed sign-in of an aggregated item).
 */
export async function announceSecurityEvents(
  events: readonly SecurityEvent[],
  eventIds: readonly string[] = [],
): Promise<void> {
  // Without a bus to reach, the events are in the log only.
  if (events.length === 0 || !busReachable()) return;
  try {
    const failed = await putEvents(
      events.map((event, index) => ({
        source: SECURITY_EVENT_SOURCE,
        detailType: SECURITY_EVENT_TYPE,
        detail: JSON.stringify({ event_id: eventIds[index] ?? event.id, ...securityEventJson(event) }),
      })),
    );
    for (let n = 0; n < failed; n++) countSignal('SecurityEventNotPublished');
  } catch (error) {
    for (const _ of events) countSignal('SecurityEventNotPublished');
    log('warn', 'security events not published', {
      actions: events.map((event) => event.kind),
      error: (error as Error).name,
    });
  }
}

/**
 * Records an event after what it records committed: once, however often the action is recorded
 * (its id names the action), and announced when it was new (a request that records an event it
 * finds already there, such as a change of interval while following, announces nothing). A
 * failure to write it is thrown, so the request fails and its retry records it.
 */
export async function recordSecurityEvent(draft: EventDraft): Promise<void> {
  const event = await namedSecurityEvent(draft);
  if (await putSecurityEventOnce(storedSecurityEvent(event))) await announceSecurityEvents([event]);
}

/**
 * A failed sign-in to an existing account (`detail`: `password`, `basic`, `two-factor`), counted
 * into the item of the account, address and minute (`FAILED_SIGN_IN_BUCKET_SECONDS`); each failure
 * is announced on its own.
 */
export async function recordFailedSignIn(login: string, detail: string, now = Date.now()): Promise<void> {
  const bucket = failedSignInBucket(now);
  const scope = requestScope();
  const at = new Date(bucket * FAILED_SIGN_IN_BUCKET_SECONDS * 1000).toISOString();
  const event = securityEvent(
    {
      kind: 'failedSignIn',
      login,
      identity: [bucket, scope.origin.address ?? ''],
      subject: { detail },
      actor: { kind: 'anonymous' },
    },
    at,
  );
  const count = await countFailedSignIn(storedSecurityEvent(event), new Date(now).toISOString());
  await announceSecurityEvents(
    [{ ...event, createdAt: new Date(now).toISOString(), subject: { ...event.subject, count } }],
    [nameUuid([event.id, count])],
  );
}

/** What a token event says of the token: never the token, only its id, note and last eight. */
export const tokenSubject = (
  authorization: Pick<Authorization, 'id' | 'note' | 'tokenLastEight' | 'clientId'>,
): SecuritySubject => ({
  token: { id: authorization.id, note: authorization.note, lastEight: authorization.tokenLastEight },
  ...(authorization.clientId ? { application: { clientId: authorization.clientId, name: null } } : {}),
});

/**
 * One page of a person's log, newest first, from `cursor` (absent: the newest), and the cursor of
 * the next page if there is one. A cursor this service did not hand out is a 422 naming the field.
 */
export async function securityLogPage(
  login: string,
  cursor: string | undefined,
  perPage: number,
): Promise<{ events: SecurityEvent[]; next: string | undefined }> {
  const after = cursor === undefined ? undefined : securityLogPosition(cursor);
  if (cursor !== undefined && after === undefined)
    throw validationFailed([{ resource: 'SecurityEvent', field: 'cursor', code: 'invalid' }]);
  const read = await readSecurityEvents(login, after, perPage);
  const events = read.events.filter((event) => isSecurityEventKind(event.kind));
  const more = read.more;
  const last = events.at(-1);
  return { events, next: more && last ? securityLogCursor(securityEventPosition(last)) : undefined };
}
