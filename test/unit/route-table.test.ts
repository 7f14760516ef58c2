import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { byPrecedence, compile, matchRoute } from '#local/http-server';
import { API_PREFIX, pathTo, ROUTES, routeId } from '#shared/routes';

const handlerFile = (handler: string) =>
  fileURLToPath(new URL(`../../functions/http/${handler}.ts`, import.meta.url));
/** A concrete request path for a route: each `{param}` filled with a sample value. */
const samplePath = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => `sample-${name}`);

describe('route table', () => {
  it('has one row per method and path, and one function name per row', () => {
    const keys = ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    const ids = ROUTES.map(routeId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s has a handler module',
    (_, route) => {
      expect(existsSync(handlerFile(route.handler))).toBe(true);
    },
  );

  it('puts REST routes under the API prefix and gives them JSON', () => {
    for (const route of ROUTES.filter((candidate) => candidate.media === 'json')) {
      expect(route.path.startsWith(`${API_PREFIX}/`)).toBe(true);
    }
  });

  it('lets the local router resolve every row to itself, with its parameters', () => {
    const compiled = ROUTES.map((route) => compile(route, route.handler)).sort(byPrecedence);
    for (const route of ROUTES) {
      const matched = matchRoute(compiled, route.method, samplePath(route.path));
      expect(matched?.compiled.route).toBe(route);
      for (const [name, value] of Object.entries(matched?.pathParameters ?? {}))
        expect(value).toBe(`sample-${name}`);
    }
    expect(matchRoute(compiled, 'GET', `${API_PREFIX}/no-such-thing`)).toBeUndefined();
    // A static segment wins over a parameter, as in API Gateway.
    expect(matchRoute(compiled, 'GET', `${API_PREFIX}/applications/grants/7`)?.compiled.route.handler).toBe(
      'grants/get',
    );
  });

  it("fills a route's path from the table, encoding each parameter", () => {
    expect(pathTo('settings/tokens')).toBe('/settings/tokens');
    expect(pathTo('settings/developer-token-revoke', { client_id: 'a/b c', authorization_id: 7 })).toBe(
      '/settings/developers/a%2Fb%20c/authorizations/7/revoke',
    );
    expect(() => pathTo('settings/application', {})).toThrow(/client_id/);
    expect(() => pathTo('no/such-handler')).toThrow(/No route/);
  });
});
