import { describe, expect, it } from 'vitest';
import { attemptOutcomeId, hookDeliveryGuid, nameUuid, statusEventId } from '#domain/event-identity';

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const change = {
  owner: 'octocat',
  repo: 'hello',
  importId: 7,
  attempt: 2,
  sync: false,
  sequence: 4,
  previous: 'importing' as const,
  status: 'mapping' as const,
};

describe('event identities', () => {
  it('are version 5 UUIDs, the same for the same name and different for another', () => {
    expect(nameUuid(['a'])).toMatch(UUID_V5);
    expect(nameUuid(['a'])).toBe(nameUuid(['a']));
    expect(nameUuid(['a'])).not.toBe(nameUuid(['b']));
  });

  it('name a status change by what it is: any part changed is another change', () => {
    const id = statusEventId(change, 'Import Status Changed');
    expect(statusEventId({ ...change }, 'Import Status Changed')).toBe(id);
    expect(statusEventId({ ...change, owner: 'OctoCat', repo: 'Hello' }, 'Import Status Changed')).toBe(id);
    for (const other of [
      { attempt: 3 },
      { sequence: 5 },
      { importId: 8 },
      { sync: true },
      { previous: null },
      { status: 'pushing' as const },
    ])
      expect(statusEventId({ ...change, ...other }, 'Import Status Changed')).not.toBe(id);
    expect(statusEventId(change, 'Import Completed')).not.toBe(id);
  });

  it('give each hook its own GUID for one event, the same on every copy', () => {
    const event = attemptOutcomeId(
      { owner: 'o', repo: 'r', importId: 1, attempt: 1 },
      'success',
      'repository_import',
    );
    expect(hookDeliveryGuid(event, 1)).toMatch(UUID_V5);
    expect(hookDeliveryGuid(event, 1)).toBe(hookDeliveryGuid(event, 1));
    expect(hookDeliveryGuid(event, 2)).not.toBe(hookDeliveryGuid(event, 1));
    const failure = attemptOutcomeId(
      { owner: 'o', repo: 'r', importId: 1, attempt: 1 },
      'failure',
      'repository_import',
    );
    expect(hookDeliveryGuid(failure, 1)).not.toBe(hookDeliveryGuid(event, 1));
  });
});
