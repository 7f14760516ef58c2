/**
 * Identities of what the service announces, derived from what is announced rather than drawn at
 * random, so that a step that runs again after its worker died sends the same identity again and a
 * receiver can drop the copy (Stripe's idempotency keys, turned around: the sender's key). Each is
 * a name-based UUID (RFC 9562 version 5: SHA-1 of a namespace and a name), the format GitHub's
 * `X-GitHub-Delivery` has.
 */
import { createHash } from 'node:crypto';

/** This service's namespace for its names (a fixed random UUID; changing it changes every identity). */
const NAMESPACE = Buffer.from('6f1d2c74a1e34f0e9b3f4f5a2d7c8e91', 'hex');

/** The version 5 UUID of the name `parts` make (one a line) in the service's namespace. */
export function nameUuid(parts: readonly (string | number)[]): string {
  const name = parts.join('\n');
  const bytes = createHash('sha1').update(NAMESPACE).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What makes one status change of an import what it is. */
export interface StatusChange {
  readonly owner: string;
  readonly repo: string;
  /** Unique per import, never reused. */
  readonly importId: number;
  /** The attempt (a sync is an attempt of its own: attempts are never reused). */
  readonly attempt: number;
  readonly sync: boolean;
  /** The attempt's count of status changes the worker made, at this one (a status may recur). */
  readonly sequence: number;
  readonly previous: string | null;
  readonly status: string;
}

/**
 * The identity of one event about a status change (`detailType`: its kind, so a change's status
 * event and its outcome event differ). Owner and repository names are compared as GitHub does,
 * without case.
 */
export const statusEventId = (change: StatusChange, detailType: string): string =>
  nameUuid([
    'import-status',
    change.owner.toLowerCase(),
    change.repo.toLowerCase(),
    change.importId,
    change.attempt,
    change.sync ? 'sync' : 'import',
    change.sequence,
    change.previous ?? '',
    change.status,
    detailType,
  ]);

/** What names an attempt of an import. */
export interface AttemptName {
  readonly owner: string;
  readonly repo: string;
  readonly importId: number;
  readonly attempt: number;
}

/** The identity of an attempt's end (at most one each: complete, error or cancelled) as `kind` announces it. */
export const attemptOutcomeId = (of: AttemptName, outcome: string, kind: string): string =>
  nameUuid([
    'import-outcome',
    of.owner.toLowerCase(),
    of.repo.toLowerCase(),
    of.importId,
    of.attempt,
    outcome,
    kind,
  ]);

/**
 * A delivery's `X-GitHub-Delivery` GUID for one hook: each hook gets its own GUID for the same
 * event (as GitHub's do), the same one however often the event is sent.
 */
export const hookDeliveryGuid = (eventId: string, hookId: number): string =>
  nameUuid(['hook-delivery', eventId, hookId]);
