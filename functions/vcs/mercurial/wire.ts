/** What Node's own requests to a Mercurial origin send and expect (hg's HTTP wire protocol). */
import type { OriginAccess } from '#vcs/origin';

export const HG_TYPE = 'application/mercurial-0.1';
export const USER_AGENT = 'mercurial/proto-1.0 (Mercurial 6.3.2; source-import)';

export const basicAuth = (access: OriginAccess): Record<string, string> =>
  access.credentials
    ? {
        authorization: `Basic ${Buffer.from(`${access.credentials.username}:${access.credentials.password}`).toString('base64')}`,
      }
    : {};

export const contentType = (headers: Record<string, unknown>) =>
  String(headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
