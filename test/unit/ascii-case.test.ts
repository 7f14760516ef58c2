import { describe, expect, it } from 'vitest';
import { repoKey, userProfileKey } from '#data/keys';
import { foldAsciiCase, sameAsciiCaseless } from '#domain/ascii-case';

describe('ASCII case fold', () => {
  it('lower-cases A–Z and nothing else', () => {
    expect(foldAsciiCase('Mona-Lisa_2.GIT')).toBe('mona-lisa_2.git');
    expect(foldAsciiCase('\u212Aate')).toBe('\u212Aate');
    expect(foldAsciiCase('\u0130')).toBe('\u0130');
    expect(foldAsciiCase('ÄÖ')).toBe('ÄÖ');
  });

  it('never equates a non-ASCII look-alike with an ASCII login', () => {
    expect(sameAsciiCaseless('Kate', 'kATE')).toBe(true);
    expect(sameAsciiCaseless('\u212Aate', 'kate')).toBe(false);
    expect(sameAsciiCaseless('\u0131', 'i')).toBe(false);
  });

  it('is the fold the key builders use', () => {
    expect(userProfileKey('\u212Aate')).not.toEqual(userProfileKey('kate'));
    expect(userProfileKey('KATE')).toEqual(userProfileKey('kate'));
    expect(repoKey('\u212Aate', 'x')).not.toEqual(repoKey('kate', 'x'));
  });
});
