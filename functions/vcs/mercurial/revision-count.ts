/** How many revisions the origin has, asked before the first pull (for progress and the object limit). */
import { type Guard, guardedRequest } from '#vcs/network-guard';
import { ForbiddenAddress, type OriginAccess } from '#vcs/origin';
import { basicAuth, contentType, HG_TYPE, USER_AGENT } from './wire.ts';

/**
 * The origin's revision count without pulling: wire-protocol `lookup`s of revision numbers (each
 * answers `1 <node>` or `0 unknown revision`), many in one `batch` request: first 0 and 2^k − 1,
 * then 63 points evenly inside the interval left, so 3 requests for 2,000 revisions and 5 for a
 * million. Null when the origin does not answer them (the pull still works; progress is then
 * counted in steps).
 */
export async function originRevisionCount(
  url: string,
  access: OriginAccess,
  guard: Guard,
  timeoutMs = 30_000,
): Promise<number | null> {
  const base = url.replace(/\?.*$/, '');
  const headers = { 'user-agent': USER_AGENT, accept: HG_TYPE, ...basicAuth(access) };
  const known = async (revs: readonly number[]) => {
    const cmds = encodeURIComponent(revs.map((rev) => `lookup key=${rev}`).join(';'));
    // No redirect: one may lead off the origin, which hg will not follow either.
    const answer = await guardedRequest(`${base}?cmd=batch&cmds=${cmds}`, guard, {
      headers,
      timeoutMs,
      maxBytes: 64 * 1024,
      maxRedirects: 0,
    });
    const parts = answer.body.toString('latin1').split(';');
    if (
      answer.status !== 200 ||
      contentType(answer.headers) !== HG_TYPE ||
      parts.length !== revs.length ||
      !parts.every((part) => /^[01] /.test(part))
    )
      throw new Error('no batched lookup');
    return parts.map((part) => part.startsWith('1 '));
  };
  /** Known revisions are 0 … n−1: the last known and the first unknown of `points`. */
  const narrow = async (points: readonly number[], low: number, high: number) => {
    const answers = await known(points);
    const firstUnknown = answers.indexOf(false);
    const last = firstUnknown < 0 ? points.at(-1) : firstUnknown === 0 ? low : points[firstUnknown - 1];
    return { low: last ?? low, high: firstUnknown < 0 ? high : (points[firstUnknown] ?? high) };
  };
  try {
    const powers = [0, ...Array.from({ length: 32 }, (_, k) => 2 ** (k + 1) - 1)];
    let { low, high } = await narrow(powers, -1, Number.POSITIVE_INFINITY);
    if (low < 0) return 0;
    if (!Number.isFinite(high)) return null;
    while (high - low > 1) {
      const step = Math.ceil((high - low) / 64);
      const points: number[] = [];
      for (let rev = low + step; rev < high; rev += step) points.push(rev);
      ({ low, high } = await narrow(points, low, high));
    }
    return low + 1;
  } catch (error) {
    if (error instanceof ForbiddenAddress) throw error;
    return null;
  }
}
