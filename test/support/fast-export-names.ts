/**
 * frej/fast-export's strangely named Mercurial branches, in the order its smoke test
 * (`t/smoke-test.t`) makes them: names only, copied as data (fast-export is GPL-2.0; no code of it
 * is here). Names that clash as Git refs, or that Git refuses.
 */
export const FAST_EXPORT_BRANCH_NAMES: readonly string[] = [
  'a?',
  'a/',
  'a/b',
  'a/?',
  '?a',
  'a.',
  'a.b',
  '.a',
  '/',
  '___3',
  '__2',
  '_1',
  'Feature- 12V Vac "Venom"',
  'åäö',
];
