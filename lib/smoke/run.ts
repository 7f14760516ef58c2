import { apiCheck, oauthMetadataCheck, tokenCheck } from './api-checks.ts';
import type { CheckResult, SmokeTarget } from './check.ts';
import { gitCheck } from './git-check.ts';

/** In the order they are printed: the API first, since the others ride on the same distribution. */
export const CHECKS = [apiCheck, oauthMetadataCheck, tokenCheck, gitCheck] as const;

/**
 * Runs every check at once (each has its own deadline, so the whole run takes at most one) and
 * returns their results in `CHECKS` order.
 */
export const runSmoke = (target: SmokeTarget): Promise<CheckResult[]> =>
  Promise.all(CHECKS.map((check) => check(target)));

/** `FAIL git  GET …: …`: one line per check. */
export const formatResult = (result: CheckResult): string =>
  `${result.outcome.toUpperCase().padEnd(4)} ${result.check.padEnd(14)} ${result.message}`;
