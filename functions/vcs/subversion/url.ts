/**
 * The URL a Subversion job works on: checked against the origin rules (`#domain/origin-url`), and
 * below it the project the owner chose; and how such a URL must be given to `svn`.
 */
import { checkOriginUrl } from '#domain/origin-url';
import { ForbiddenAddress, type OriginAccess, OriginFailed, type RawJob } from '../origin.ts';

export function checkedUrl(raw: string, access: Pick<OriginAccess, 'allowedAddresses'>): URL {
  const check = checkOriginUrl(raw, 'subversion', access.allowedAddresses);
  if (!check.ok) {
    if (check.problem === 'forbidden_address') throw new ForbiddenAddress(new URL(raw).hostname);
    throw new OriginFailed(check.message);
  }
  return check.url;
}

/** The URL to import: the URL itself, or the chosen project below it. */
export function originUrl(job: RawJob): URL {
  const base = checkedUrl(job.url, job);
  if (!job.choice?.path) return base;
  const root = base.toString().endsWith('/') ? base : new URL(`${base.toString()}/`);
  const path = job.choice.path
    .split('/')
    .filter((part) => part !== '')
    .map(encodeURIComponent)
    .join('/');
  return checkedUrl(new URL(path, root).toString(), job);
}

/**
 * A URL as `svn` (not `svnrdump`) must be given it: svn reads the last `@` of a target as a peg
 * revision, even one percent-encoded (`team%402` is `team` at revision 2), so a path with an `@`
 * in it names another path or fails. An `@` at the end is an empty peg revision (HEAD) and makes
 * every earlier `@` part of the path. `svnrdump` takes its URL literally and must not get one.
 */
export const pegged = (url: string): string => `${url}@`;
