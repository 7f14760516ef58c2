import { describe, expect, it } from 'vitest';
import { type AuthorsFileEntry, notInAnyHistory } from '#domain/authors-file';
import { authorsFileSkip } from '#domain/import-batches';

const entry = (line: number, origin: string): AuthorsFileEntry => ({
  line,
  origin,
  name: origin.toUpperCase(),
  email: `${origin}@example.org`,
});

describe('notInAnyHistory', () => {
  const entries = [entry(1, 'ann'), entry(2, 'bob'), entry(3, 'cy')];

  it('keeps the entries every import left unmatched', () => {
    const first = [entries[1], entries[2]] as AuthorsFileEntry[];
    const second = [entries[0], entries[2]] as AuthorsFileEntry[];
    expect(notInAnyHistory(entries, [first, second])).toEqual([entries[2]]);
  });

  it('is every entry (once per origin) when the file was applied to no import', () => {
    expect(notInAnyHistory([...entries, entry(4, 'ann')], [])).toEqual(entries);
  });
});

describe('authorsFileSkip', () => {
  it('lets complete and rewriting imports take the file', () => {
    expect(authorsFileSkip({ state: 'started' }, 'complete')).toBeUndefined();
    expect(authorsFileSkip({ state: 'started' }, 'mapping')).toBeUndefined();
  });

  it('says why every other entry is skipped', () => {
    expect(authorsFileSkip({ state: 'queued' }, undefined)).toBe('queued: the import has not started yet');
    expect(authorsFileSkip({ state: 'cancelled' }, undefined)).toBe('the import never started (cancelled)');
    expect(authorsFileSkip({ state: 'not_started' }, undefined)).toBe(
      'the import never started (not started)',
    );
    expect(authorsFileSkip({ state: 'started' }, undefined)).toBe('the import was deleted');
    expect(authorsFileSkip({ state: 'started' }, 'importing')).toMatch(/^still importing \(importing\)/);
    expect(authorsFileSkip({ state: 'started' }, 'pushing')).toMatch(/^still importing/);
    expect(authorsFileSkip({ state: 'started' }, 'error')).toMatch(/not complete \(error\)/);
    expect(authorsFileSkip({ state: 'started' }, 'detection_found_multiple')).toMatch(/not complete/);
  });
});
