/**
 * Request matching as API Gateway does it, over rows of the route table: the local API server
 * routes with it, and so does the Git front end, which serves its own rows of the same table.
 */
import type { Route } from './routes.ts';

export interface CompiledRoute<H> {
  readonly route: Route;
  readonly pattern: RegExp;
  readonly params: readonly string[];
  readonly handler: H;
}

/** `/api/v3/users/{login}` → a regex with one capture per parameter, as API Gateway matches. */
export function compile<H>(route: Route, handler: H): CompiledRoute<H> {
  const params: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (!param?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      params.push(param[1]);
      return '([^/]+)';
    })
    .join('/');
  return { route, pattern: new RegExp(`^${source}$`), params, handler };
}

/**
 * API Gateway prefers a static path segment over a `{param}` at the same position; sorting the
 * routes this way lets first-match give the same answer.
 */
export function byPrecedence(a: { readonly route: Route }, b: { readonly route: Route }): number {
  const rank = (route: Route) => route.path.split('/').map((segment) => (segment.startsWith('{') ? 1 : 0));
  const left = rank(a.route);
  const right = rank(b.route);
  for (let i = 0; i < Math.min(left.length, right.length); i++)
    if (left[i] !== right[i]) return (left[i] ?? 0) - (right[i] ?? 0);
  return left.length - right.length;
}

function safeDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/**
 * The path API Gateway (REST) matches resources against: one trailing slash does not count, so
 * `/api/v3/` is the resource `/api/v3` (the event's `path` keeps the slash).
 */
export const apiGatewayResourcePath = (pathname: string): string =>
  pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;

/**
 * The route API Gateway would pick for a request, with its decoded path parameters; `method`
 * undefined matches the path whatever the method (a CDN's path behaviour).
 */
export function matchRoute<T extends Pick<CompiledRoute<unknown>, 'route' | 'pattern' | 'params'>>(
  compiled: readonly T[],
  method: string | undefined,
  pathname: string,
): { compiled: T; pathParameters: Record<string, string> } | undefined {
  for (const candidate of compiled) {
    if (method !== undefined && candidate.route.method !== method) continue;
    const match = candidate.pattern.exec(pathname);
    if (!match) continue;
    const pathParameters: Record<string, string> = {};
    for (const [index, name] of candidate.params.entries()) {
      const value = safeDecode(match[index + 1] ?? '');
      if (value === undefined) return undefined;
      pathParameters[name] = value;
    }
    return { compiled: candidate, pathParameters };
  }
  return undefined;
}
