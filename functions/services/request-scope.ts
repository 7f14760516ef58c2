/**
 * Who is making the request being served, and from where, for the security log: set when a
 * route's function takes the request (`http/middleware/per-route.ts`: the address and user agent;
 * the Git front end's server likewise)
 * and once its caller is known (the API's authentication, the pages' session), read by the
 * services that record security events. Carried in the async context (`AsyncLocalStorage`), so
 * requests served side by side in one process (the local stack) never see each other's; outside
 * a request (the admin CLI, a workflow step) there is none.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { RequestOrigin, SecurityActor } from '#domain/security-log';
import { header } from '#shared/credentials';

interface Scope {
  readonly origin: RequestOrigin;
  actor: SecurityActor | undefined;
}

const scoped = new AsyncLocalStorage<Scope>();

/** Longest user agent kept (GitHub's own log truncates; a header can be 10 KB). */
const MAX_USER_AGENT = 512;

/** A request's origin as the log keeps it: the address, and the user agent cut to its first 512 characters. */
export const requestOrigin = (address: string | undefined, userAgent: string | undefined): RequestOrigin => ({
  address: address || null,
  userAgent: userAgent ? userAgent.slice(0, MAX_USER_AGENT) : null,
});

/** The address API Gateway saw (`requestContext.identity.sourceIp`) and the `User-Agent` header. */
export const originOf = (event: Pick<APIGatewayProxyEvent, 'requestContext' | 'headers'>): RequestOrigin =>
  requestOrigin(event.requestContext?.identity?.sourceIp, header(event, 'user-agent'));

/** Runs `work` as the handling of a request from `origin` (the Git front end's, say). */
export const inRequestFrom = <T>(origin: RequestOrigin, work: () => T): T =>
  scoped.run({ origin, actor: undefined }, work);

/** Runs `work` as the handling of `event`. */
export const inRequestScope = <T>(
  event: Pick<APIGatewayProxyEvent, 'requestContext' | 'headers'>,
  work: () => T,
): T => inRequestFrom(originOf(event), work);

/** Records who the caller turned out to be (nothing outside a request). */
export function setRequestActor(actor: SecurityActor): void {
  const scope = scoped.getStore();
  if (scope) scope.actor = actor;
}

/** The request's origin and caller (none known yet: undefined); outside a request, no address. */
export function requestScope(): {
  readonly inRequest: boolean;
  readonly origin: RequestOrigin;
  readonly actor: SecurityActor | undefined;
} {
  const scope = scoped.getStore();
  return scope
    ? { inRequest: true, origin: scope.origin, actor: scope.actor }
    : { inRequest: false, origin: { address: null, userAgent: null }, actor: undefined };
}
