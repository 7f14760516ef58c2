/**
 * The route table: the one list of endpoints. It drives the API Gateway resources and Lambda
 * functions in `lib/cdk`, the local server's router, the README's route table and the test that
 * checks they all agree. Plain data only, so CDK code can import it without loading handler code.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * How a route authenticates its caller.
 * - `none`: anonymous; credentials, when sent, are still checked and a bad one is 401.
 * - `password`: HTTP Basic with the user's login and password (plus OTP); tokens are refused.
 * - `user`: a user, by password or by OAuth token.
 * - `app`: HTTP Basic with an OAuth application's client_id and client_secret.
 * - `session`: a browser session cookie (web pages).
 */
export type AuthKind = 'none' | 'password' | 'user' | 'app' | 'session';

/** What the response body is: GitHub JSON, an HTML page, or an OAuth token-endpoint response. */
export type MediaKind = 'json' | 'html' | 'oauth';

export interface Route {
  readonly method: HttpMethod;
  /** Full request path in API Gateway syntax: `/api/v3/users/{login}`. */
  readonly path: string;
  /** Handler module under `functions/http/`, without extension; also the route's stable id. */
  readonly handler: string;
  readonly auth: AuthKind;
  /** Scopes the action accepts (`X-Accepted-OAuth-Scopes`); empty means any token will do. */
  readonly scopes: readonly string[];
  readonly media: MediaKind;
  /** Least-privilege table access for the route's Lambda function. */
  readonly table: 'RO' | 'RW';
  /** Preview media type the Accept header must name (e.g. `barred-rock`). */
  readonly preview?: string;
}

const API = '/api/v3';

export const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: `${API}/user`,
    handler: 'users/get-authenticated',
    auth: 'user',
    scopes: [],
    media: 'json',
    table: 'RO',
  },
  {
    method: 'GET',
    path: `${API}/users/{login}`,
    handler: 'users/get-by-login',
    auth: 'none',
    scopes: [],
    media: 'json',
    table: 'RO',
  },
  {
    method: 'POST',
    path: `${API}/user/repos`,
    handler: 'repos/create-for-user',
    auth: 'user',
    scopes: ['public_repo', 'repo'],
    media: 'json',
    table: 'RW',
  },
  {
    method: 'GET',
    path: `${API}/repos/{owner}/{repo}`,
    handler: 'repos/get',
    auth: 'none',
    scopes: [],
    media: 'json',
    table: 'RO',
  },
];

/** The API root path; the REST API's `{base_url}` ends with it. */
export const API_PREFIX = API;

/** A stable, CloudFormation-safe name for a route's function: `users/get-by-login` → `UsersGetByLogin`. */
export function routeId(route: Pick<Route, 'handler'>): string {
  return route.handler
    .split(/[/-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** The route a handler module serves; throws at cold start if the table has no such row. */
export function routeFor(handler: string): Route {
  const route = ROUTES.find((candidate) => candidate.handler === handler);
  if (!route) throw new Error(`No route in the route table for handler ${handler}`);
  return route;
}
