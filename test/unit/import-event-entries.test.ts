import { describe, expect, it } from 'vitest';
import { type BusEntry, batchesOf, entryBytes, MAX_ENTRY_BYTES } from '#services/event-bus';
import { entryOf, type ImportEventDetail } from '#services/import-events';
import { IMPORT_EVENT_SOURCE, IMPORT_EVENT_TYPE } from '#shared/import-events';

const entry = (detailBytes: number): BusEntry => ({
  source: IMPORT_EVENT_SOURCE,
  detailType: IMPORT_EVENT_TYPE.statusChanged,
  detail: JSON.stringify({ pad: 'x'.repeat(detailBytes) }),
});

describe('batchesOf (PutEvents limits)', () => {
  it('puts at most 10 entries in a call, in order', () => {
    const entries = Array.from({ length: 25 }, (_, n) => entry(n));
    const batches = batchesOf(entries);
    expect(batches.map((batch) => batch.length)).toEqual([10, 10, 5]);
    expect(batches.flat()).toEqual(entries);
  });

  it('keeps the sizes of one call under 256 KB', () => {
    const batches = batchesOf(Array.from({ length: 5 }, () => entry(100 * 1024)));
    expect(batches.map((batch) => batch.length)).toEqual([2, 2, 1]);
    for (const batch of batches)
      expect(batch.reduce((n, e) => n + entryBytes(e), 0)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
  });
});

describe('entryOf', () => {
  const detail = (choices: number): ImportEventDetail => ({
    event_id: '0b0e8a64-2f1c-5d7e-9a3b-4c5d6e7f8091',
    owner: 'octocat',
    repo: 'r',
    attempt: 1,
    execution_name: 'octocat.r.attempt-1',
    sync: false,
    previous_status: 'detecting',
    import: {
      status: 'detection_found_multiple',
      project_choices: Array.from({ length: choices }, (_, n) => ({
        vcs: 'subversion',
        human_name: `p${n}`.repeat(20),
      })),
    },
  });

  it('carries the whole detail when it fits', () => {
    const put = entryOf(IMPORT_EVENT_TYPE.statusChanged, detail(3));
    expect(put.source).toBe(IMPORT_EVENT_SOURCE);
    expect(JSON.parse(put.detail)).toEqual(detail(3));
  });

  it('leaves out project_choices, and says so, when the whole would pass 256 KB', () => {
    const put = entryOf(IMPORT_EVENT_TYPE.statusChanged, detail(10_000));
    expect(entryBytes(put)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    const parsed = JSON.parse(put.detail);
    expect(parsed.import).toEqual({ status: 'detection_found_multiple', project_choices_omitted: true });
    expect(parsed.attempt).toBe(1);
  });
});
