import { describe, expect, it } from 'vitest';
import {
  commitEntry,
  entriesOf,
  limitVictim,
  liveCountAttribute,
  patchEntry,
  type RingEntry,
  scopeSetKey,
  victimOf,
} from '#data/token-ring';
import type { Scope } from '#domain/scopes';
import { ENV } from '#shared/config';

// The request builders name the table; read from the environment on first use.
process.env[ENV.tableName] ??= 'unit-table';

const SCOPES: Scope[] = ['gist'];
const SET = scopeSetKey(SCOPES);
const LIMIT = 10;
const name = (label: string) => `tok#${SET}#${label}`;

/** A grant item: committed tokens `live` and creations under way `pending`, by label, oldest first. */
function grant(live: string[], pending: string[] = []): Record<string, unknown> {
  const item: Record<string, unknown> = { [liveCountAttribute(SET)]: live.length };
  let seq = 0;
  for (const label of live)
    item[name(label)] = { seq: ++seq, id: seq, hash: `hash-${label}`, scopes: SCOPES };
  for (const label of pending) item[name(label)] = ++seq;
  return item;
}
const labels = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);
const labelOf = (entry: RingEntry | undefined) => entry?.attribute.split('#').at(-1);

describe('victimOf (at registration)', () => {
  it('names the oldest token when one more comes at the limit', () => {
    expect(labelOf(victimOf(grant(labels(10, 'L'), ['X']), SET, LIMIT, name('X')))).toBe('L1');
  });

  it('names distinct tokens for concurrent creations, in issue order', () => {
    const item = grant(labels(10, 'L'), ['A', 'B', 'C']);
    // Each creation decides on the ring as its own registration left it: B did not see C.
    expect(labelOf(victimOf(grant(labels(10, 'L'), ['A']), SET, LIMIT, name('A')))).toBe('L1');
    expect(labelOf(victimOf(grant(labels(10, 'L'), ['A', 'B']), SET, LIMIT, name('B')))).toBe('L2');
    expect(labelOf(victimOf(item, SET, LIMIT, name('C')))).toBe('L3');
  });

  it('names nothing below the limit', () => {
    expect(victimOf(grant(labels(8, 'L'), ['A', 'X']), SET, LIMIT, name('X'))).toBeUndefined();
  });

  it('supersedes a creation under way when more than ten are', () => {
    const item = grant([], [...labels(10, 'P'), 'X']);
    expect(victimOf(item, SET, LIMIT, name('X'))).toMatchObject({ kind: 'pending', attribute: name('P1') });
  });
});

describe('limitVictim (decided again on the item a failed commit returned)', () => {
  it('takes a committed token when the pending victim is gone and the count is at the limit', () => {
    // X named F, a failing exchange that then took its entry back: F revoked nothing, so X must.
    const item = grant(labels(10, 'L'), ['A', 'X']);
    const victim = limitVictim(undefined, item, SET, LIMIT, 'adds', name('X'));
    // The oldest that no other creation under way names by its rank: A's names L1.
    expect(victim).toMatchObject({ kind: 'live', attribute: name('L2') });
  });

  it('takes nothing when the count leaves room', () => {
    expect(
      limitVictim(undefined, grant(labels(9, 'L'), ['X']), SET, LIMIT, 'adds', name('X')),
    ).toBeUndefined();
  });

  it('keeps a committed victim whatever the count', () => {
    const item = grant(labels(10, 'L'), ['X']);
    const [, , , , , , , , , , oldest] = entriesOf(item, SET);
    expect(limitVictim(oldest, item, SET, LIMIT, 'adds', name('X'))).toBe(oldest);
  });

  it('has a superseded creation revoke only while the count is over the limit', () => {
    const atLimit = grant(labels(10, 'L'));
    const over = grant(labels(11, 'L'));
    const ranked = entriesOf(over, SET).at(-1);
    expect(limitVictim(entriesOf(atLimit, SET).at(-1), atLimit, SET, LIMIT, 'owes')).toBeUndefined();
    expect(limitVictim(ranked, over, SET, LIMIT, 'owes')).toBe(ranked);
    expect(labelOf(limitVictim(undefined, over, SET, LIMIT, 'owes'))).toBe('L1');
  });
});

describe('commitEntry (the grant item part of a creation)', () => {
  const base = { login: 'octo', clientId: 'Iv1.abc', setKey: SET, limit: LIMIT, timestamp: 't' };
  const mine = { attribute: name('X'), token: { seq: 12, id: 12, hash: 'hash-X', scopes: SCOPES } };
  const item = grant(labels(10, 'L'), ['P', 'X']);
  const [, pending, ...rest] = entriesOf(item, SET);
  const live = rest.at(-1);

  it('adds a token without a victim only below the limit', () => {
    const update = commitEntry({ ...base, mine }).Update;
    expect(update?.UpdateExpression).toContain('ADD #live :change');
    expect(update?.ExpressionAttributeValues?.[':change']).toBe(1);
    expect(update?.ConditionExpression).toContain('(attribute_not_exists(#live) OR #live < :limit)');
  });

  it('leaves the count alone when it revokes a committed token', () => {
    const update = commitEntry({ ...base, mine, ...(live ? { victim: live } : {}) }).Update;
    expect(update?.UpdateExpression).not.toContain('#live');
    expect(update?.ConditionExpression).toContain('#victim.#victimHashField = :victimHash');
  });

  it('adds a token that supersedes a pending creation without a count condition (that creation owes the limit)', () => {
    const update = commitEntry({ ...base, mine, ...(pending ? { victim: pending } : {}) }).Update;
    expect(update?.ExpressionAttributeValues?.[':change']).toBe(1);
    expect(update?.ConditionExpression).not.toContain('#live');
  });

  it('revokes for a superseded creation only while the count is over the limit', () => {
    const update = commitEntry({ ...base, ...(live ? { victim: live } : {}) }).Update;
    expect(update?.ExpressionAttributeValues?.[':change']).toBe(-1);
    expect(update?.ConditionExpression).toContain('#live > :limit');
  });
});

describe('patchEntry (a token changed in place)', () => {
  it('moves a token whose scopes change to another scope set from one live count to the other', () => {
    const update = patchEntry('octo', 'Iv1.abc', name('L1'), {
      scopes: { from: SCOPES, to: ['repo'] },
    }).Update;
    expect(update?.UpdateExpression).toContain('ADD #liveFrom :leave, #liveTo :join');
    expect(update?.ExpressionAttributeNames).toMatchObject({
      '#liveFrom': liveCountAttribute(SET),
      '#liveTo': liveCountAttribute(scopeSetKey(['repo'])),
    });
  });

  it('leaves the counts alone when the scope set stays (a reorder, a reset)', () => {
    const reordered = patchEntry('octo', 'Iv1.abc', name('L1'), {
      scopes: { from: ['gist', 'repo'], to: ['repo', 'gist'] },
    }).Update;
    const reset = patchEntry('octo', 'Iv1.abc', name('L1'), { hash: 'new' }, 'old').Update;
    expect(reordered?.UpdateExpression).not.toContain('ADD');
    expect(reset?.UpdateExpression).not.toContain('ADD');
  });
});
