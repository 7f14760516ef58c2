import { pageRequest } from '#domain/pagination';
import { securityEventJson } from '#domain/security-log';
import { apiHandler } from '#http/middleware/http-stack';
import { securityLogPage } from '#services/security-log';
import { requiresAuthentication } from '#shared/errors';

/**
 * GET /user/security-log (this service's extension): the authenticated person's own security
 * events, newest first, paged by `per_page` (at most 100) and the opaque `cursor` the `Link`
 * header's `rel="next"` carries. No one reads another person's log.
 */
export const handler = apiHandler({}, async ({ caller, query, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const { perPage } = pageRequest(query);
  const { events, next } = await securityLogPage(caller.user.login, query.cursor || undefined, perPage);
  const headers: Record<string, string> = {};
  if (next) {
    const target = new URL(`${urls.api}/user/security-log`);
    target.searchParams.set('per_page', String(perPage));
    target.searchParams.set('cursor', next);
    headers.Link = `<${target.toString()}>; rel="next"`;
  }
  return { status: 200, body: events.map(securityEventJson), headers };
});
