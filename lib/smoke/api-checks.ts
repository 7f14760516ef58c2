import type { Route } from '#shared/routes';
import { type Check, fail, pass, routeOf, type SmokeTarget, urlOf } from './check.ts';
import { fromCloudFront, jsonOf, type Probe, probe, summary } from './probe.ts';
import { named, RESOURCES, routeFunction, type StackResource, stackOf } from './resources.ts';

const AUTHENTICATED_USER = routeOf('users/get-authenticated');
const SERVER_METADATA = routeOf('oauth/metadata');

const ACCEPT = { Accept: 'application/vnd.github.v3+json' };

/**
 * Why an answer to an API Gateway route is not its function's, and where to look: the
 * distribution when nothing (or CloudFront itself) answered, the route's function on a 5xx, and
 * otherwise the distribution's default behaviour, which must lead to the API stage.
 */
function unexpected(result: Probe, route: Route, target: SmokeTarget): string {
  const look = (resource: StackResource) => named(resource, target.stackName);
  const distribution = look(RESOURCES.distribution);
  if (!result.answered) {
    return `${result.reason}: look at the ${distribution} (is ${target.origin} output WebUrl?)`;
  }
  const got = `${route.method} ${route.path} answered ${summary(result)}`;
  if (result.status >= 300 && result.status < 400) {
    return `${got}: give the URL it redirects to (output WebUrl, https)`;
  }
  if (fromCloudFront(result)) {
    return `${got} from CloudFront itself: look at the ${distribution} (its default behaviour leads to the ${look(RESOURCES.stage)}; a 403 is its web ACL)`;
  }
  if (result.status >= 500) {
    return `${got}: look at the ${look(routeFunction(route))} (its log group) and the execution log of the ${look(RESOURCES.stage)}`;
  }
  return `${got}, which is not the function's answer: the default behaviour of the ${distribution} must lead to the ${look(RESOURCES.stage)}`;
}

/**
 * The API through the distribution's default behaviour: an anonymous `GET /api/v3/user` is 401
 * "Requires authentication", an answer only the route's function gives (API Gateway has no 401).
 */
export const apiCheck: Check = async (target) => {
  const result = await probe(urlOf(target, AUTHENTICATED_USER), ACCEPT, target.timeoutMs);
  if (result.answered && result.status === 401 && jsonOf(result)?.message === 'Requires authentication') {
    return pass('api', `GET ${AUTHENTICATED_USER.path} without credentials: 401 from its function`);
  }
  return fail('api', unexpected(result, AUTHENTICATED_USER, target));
};

/**
 * The OAuth server metadata (RFC 8414), whose `issuer` must be the very origin it was fetched
 * from: clients compare the two character for character, and the functions build every URL they
 * render (clone URLs, redirects) from the same public URL.
 */
export const oauthMetadataCheck: Check = async (target) => {
  const result = await probe(urlOf(target, SERVER_METADATA), {}, target.timeoutMs);
  const issuer = result.answered && result.status === 200 ? jsonOf(result)?.issuer : undefined;
  if (issuer === target.origin)
    return pass('oauth-metadata', `GET ${SERVER_METADATA.path}: issuer ${issuer}`);
  if (typeof issuer === 'string') {
    return fail(
      'oauth-metadata',
      `GET ${SERVER_METADATA.path} names issuer ${issuer}, not ${target.origin}, and clients refuse that: check against output WebUrl; if that is what you gave, the functions' public URL is wrong (context publicUrl, the WebOrigin parameter of the ${stackOf(routeFunction(SERVER_METADATA), target.stackName)})`,
    );
  }
  return fail('oauth-metadata', unexpected(result, SERVER_METADATA, target));
};

/**
 * An authenticated request: `GET /api/v3/user` with the token is 200 with its user, which takes
 * the function a read of the table (the token's hash, then the user).
 */
export const tokenCheck: Check = async (target) => {
  if (target.token === undefined)
    return { check: 'token', outcome: 'skip', message: 'no token given (--token or SMOKE_TOKEN)' };
  const headers = { ...ACCEPT, Authorization: `token ${target.token}` };
  const result = await probe(urlOf(target, AUTHENTICATED_USER), headers, target.timeoutMs);
  const login = result.answered && result.status === 200 ? jsonOf(result)?.login : undefined;
  if (typeof login === 'string')
    return pass('token', `GET ${AUTHENTICATED_USER.path} with the token: 200 as ${login}`);
  if (result.answered && result.status === 401 && jsonOf(result)?.message === 'Bad credentials') {
    return fail(
      'token',
      `GET ${AUTHENTICATED_USER.path} with the token answered 401 Bad credentials: the token is not one of the ${named(RESOURCES.table, target.stackName)} (revoked, expired, or made on another deployment)`,
    );
  }
  if (result.answered && result.status >= 500 && !fromCloudFront(result)) {
    return fail(
      'token',
      `${unexpected(result, AUTHENTICATED_USER, target)}; with a token it reads the ${named(RESOURCES.table, target.stackName)}`,
    );
  }
  return fail('token', unexpected(result, AUTHENTICATED_USER, target));
};
