import { describe, expect, it } from 'vitest';
import { revisionChange } from '#domain/revision-map';

const entry = (originRevision: string, commit = `c-${originRevision}`) => ({ originRevision, commit });
const list = (...names: string[]) => names.map((name) => entry(name));

describe('revisionChange', () => {
  it('finds entries added at the end, in the middle and both, with the first position that differs', () => {
    expect(revisionChange(list('a', 'b'), list('a', 'b', 'c'))).toEqual({ firstChange: 2, added: list('c') });
    expect(revisionChange(list('a', 'b', 'c'), list('a', 'x', 'b', 'c', 'y'))).toEqual({
      firstChange: 1,
      added: list('x', 'y'),
    });
    expect(revisionChange(list('a', 'b'), list('a', 'b'))).toEqual({ firstChange: 2, added: [] });
    expect(revisionChange([], list('a'))).toEqual({ firstChange: 0, added: list('a') });
  });

  it('takes old entries in another order as no addition, from the first that moved', () => {
    expect(revisionChange(list('a', 'b', 'c'), list('a', 'c', 'b'))).toEqual({ firstChange: 1, added: [] });
  });

  it('refuses a list that lost an entry or maps one to another commit', () => {
    expect(revisionChange(list('a', 'b', 'c'), list('a', 'c', 'd'))).toBeUndefined();
    expect(revisionChange(list('a', 'b'), [entry('a'), entry('b', 'rewritten')])).toBeUndefined();
    expect(revisionChange(list('a', 'b'), list('a'))).toBeUndefined();
  });
});
