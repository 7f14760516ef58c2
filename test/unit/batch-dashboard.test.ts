import { describe, expect, it } from 'vitest';
import { batchCounts, dashboardOrder, entryGroup, inStepSince, revisionParts } from '#domain/batch-dashboard';
import { SYNC_OFF } from '#domain/import-sync';

const started = (index: number, status: string, extra: Record<string, unknown> = {}) => ({
  index,
  repository: `r${index}`,
  state: 'started' as const,
  record: { status, percent: null, waitingFor: undefined, ...extra } as never,
});

describe('entryGroup and dashboardOrder', () => {
  it('puts what needs a person first, then what runs, what waits and what is done', () => {
    const entries = [
      started(0, 'complete'),
      { index: 1, repository: 'r1', state: 'queued' as const },
      started(2, 'importing'),
      started(3, 'error'),
      started(4, 'importing', { waitingFor: 'lfs_choice' }),
      {
        ...started(5, 'complete'),
        sync: {
          ...SYNC_OFF,
          state: 'following' as const,
          lastSync: { status: 'failed' as const, newCommits: 0 },
        },
      },
      { index: 6, repository: 'r6', state: 'not_started' as const, message: 'taken' },
      started(7, 'auth_failed'),
    ];
    expect(entries.map(entryGroup)).toEqual([
      'complete',
      'queued',
      'running',
      'problem',
      'problem',
      'problem',
      'problem',
      'problem',
    ]);
    expect(dashboardOrder(entries).map((entry) => entry.index)).toEqual([3, 4, 5, 6, 7, 2, 1, 0]);
    expect(batchCounts(entries)).toMatchObject({
      problem: 5,
      running: 1,
      queued: 1,
      complete: 1,
      following: 1,
    });
  });
});

describe('inStepSince', () => {
  it('is the later of the last successful sync and a later look that found nothing new; null before either', () => {
    const ok = { status: 'succeeded' as const, newCommits: 0 };
    expect(inStepSince({ lastSyncedAt: null, lastCheckedAt: null, lastSync: null })).toBeNull();
    expect(
      inStepSince({
        lastSyncedAt: '2026-01-01T10:00:00Z',
        lastCheckedAt: '2026-01-01T11:00:00Z',
        lastSync: ok,
      }),
    ).toBe('2026-01-01T11:00:00Z');
    // A look after a failed sync says nothing about being in step.
    expect(
      inStepSince({
        lastSyncedAt: '2026-01-01T10:00:00Z',
        lastCheckedAt: '2026-01-01T11:00:00Z',
        lastSync: { status: 'failed', newCommits: 0 },
      }),
    ).toBe('2026-01-01T10:00:00Z');
  });
});

describe('revisionParts', () => {
  it('packs whole maps while they fit; a map that does not fit starts a part and is split at multiples of a part', () => {
    const parts = revisionParts(
      [
        { index: 0, total: 4 },
        { index: 1, total: 0 },
        { index: 2, total: 5 },
        { index: 3, total: 23 },
        { index: 4, total: 3 },
      ],
      10,
    );
    expect(parts).toEqual([
      [
        { index: 0, start: 0, count: 4 },
        { index: 2, start: 0, count: 5 },
      ],
      [{ index: 3, start: 0, count: 10 }],
      [{ index: 3, start: 10, count: 10 }],
      [
        { index: 3, start: 20, count: 3 },
        { index: 4, start: 0, count: 3 },
      ],
    ]);
    for (const part of parts)
      expect(part.reduce((sum, slice) => sum + slice.count, 0)).toBeLessThanOrEqual(10);
    expect(revisionParts([])).toEqual([]);
  });
});
