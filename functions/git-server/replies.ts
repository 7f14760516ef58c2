/**
 * Errors as Git clients read them, mapped in one place: plain text for smart HTTP (git prints it
 * as `remote: …`), `{"message"}` in the LFS media type for the LFS API (git-lfs prints the
 * message); a 401 carries the Basic challenge that git and git-lfs answer with credentials.
 */
import { config } from '#shared/config';
import type { Route } from '#shared/routes';
import type { GitReply } from './request.ts';

/** The Git LFS API's media type: its bodies, its errors. */
export const LFS_MEDIA_TYPE = 'application/vnd.git-lfs+json';

const isLfsRoute = (route: Pick<Route, 'path'>) => route.path.includes('/info/lfs/');

/** Git asks for credentials on a 401 with a Basic challenge; git-lfs also reads `LFS-Authenticate`. */
function challenge(route: Pick<Route, 'path'>): Record<string, string> {
  const realm = `Basic realm="${config().vendor === 'github' ? 'GitHub' : config().vendor}"`;
  return { 'WWW-Authenticate': realm, ...(isLfsRoute(route) ? { 'LFS-Authenticate': realm } : {}) };
}

/** The answer to a failed request of `route` (undefined: no route matched the path). */
export function errorReply(
  route: Pick<Route, 'path'> | undefined,
  status: number,
  message: string,
  extra: Readonly<Record<string, string>> = {},
): GitReply {
  const headers = { ...(status === 401 && route ? challenge(route) : {}), ...extra };
  if (route && isLfsRoute(route))
    return {
      status,
      headers: { 'Content-Type': LFS_MEDIA_TYPE, ...headers },
      body: JSON.stringify({ message, documentation_url: config().docsUrl }),
    };
  return {
    status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', ...headers },
    body: `${message}\n`,
  };
}
