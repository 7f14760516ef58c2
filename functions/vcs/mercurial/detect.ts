/**
 * Detection of a Mercurial origin over HTTP(S), and the URL the import pulls from (the origin
 * itself, or the repository chosen from an hgweb index).
 */
import { checkOriginUrl } from '#domain/origin-url';
import { type Guard, guardedRequest } from '#vcs/network-guard';
import { type Detection, ForbiddenAddress, type OriginAccess, OriginFailed, type RawJob } from '#vcs/origin';
import { basicAuth, contentType, HG_TYPE, USER_AGENT } from './wire.ts';

export function checkedUrl(raw: string, access: Pick<OriginAccess, 'allowedAddresses'>): URL {
  const check = checkOriginUrl(raw, 'mercurial', access.allowedAddresses);
  if (check.ok) return check.url;
  if (check.problem === 'forbidden_address') throw new ForbiddenAddress(new URL(raw).hostname);
  throw new OriginFailed(check.message);
}

/** The repository to pull: the URL itself, or the chosen repository of an hgweb index. */
export function originUrl(job: Pick<RawJob, 'url' | 'choice' | 'allowedAddresses'>): string {
  const base = checkedUrl(job.url, job);
  if (!job.choice?.path) return base.toString();
  const root = base.toString().endsWith('/') ? base : new URL(`${base.toString()}/`);
  return checkedUrl(new URL(job.choice.path.replace(/^\/+/, ''), root).toString(), job).toString();
}

/**
 * `?cmd=capabilities` answers with hg's wire protocol type from a repository; an hgweb index
 * (hgweb.config with several repositories) answers its HTML page there, and lists its
 * repositories one path a line at `?style=raw` (a single repository refuses that style).
 */
export async function detectHttp(
  url: URL,
  access: OriginAccess,
  guard: Guard,
  timeoutMs = 30_000,
): Promise<Detection> {
  const base = url.toString().replace(/\?.*$/, '');
  const headers = { 'user-agent': USER_AGENT, accept: HG_TYPE, ...basicAuth(access) };
  const probe = async (query: string) => {
    try {
      return await guardedRequest(`${base}${query}`, guard, { headers, timeoutMs, maxBytes: 64 * 1024 });
    } catch (error) {
      if (error instanceof ForbiddenAddress) throw error;
      return undefined;
    }
  };
  const caps = await probe('?cmd=capabilities');
  if (!caps) return { kind: 'nothing' };
  if (caps.status === 401) return { kind: 'needs_auth' };
  if (caps.status === 200 && contentType(caps.headers) === HG_TYPE)
    return /(?:^|\s)(?:lookup|getbundle)(?:\s|$)/.test(caps.body.toString('latin1'))
      ? { kind: 'found', vcs: 'mercurial' }
      : { kind: 'nothing' };
  if (caps.status !== 200 || contentType(caps.headers) !== 'text/html') return { kind: 'nothing' };
  const index = await probe(base.endsWith('/') ? '?style=raw' : '/?style=raw');
  if (index?.status !== 200 || contentType(index.headers) !== 'text/plain' || index.truncated)
    return { kind: 'nothing' };
  const lines = index.body
    .toString('utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length === 0 || !lines.every((line) => /^\/[^\s?#]*\/$/.test(line))) return { kind: 'nothing' };
  const prefix = new URL(base.endsWith('/') ? base : `${base}/`).pathname;
  const choices = lines.map((line) => {
    const path = line.startsWith(prefix) ? line.slice(prefix.length) : line.replace(/^\//, '');
    return { vcs: 'mercurial' as const, humanName: path.replace(/\/$/, ''), path };
  });
  return { kind: 'multiple', choices };
}
