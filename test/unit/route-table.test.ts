import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GIT_HANDLERS } from '#git-server/handlers';
import { byPrecedence, compile, matchRoute } from '#shared/route-match';
import {
  API_PREFIX,
  GRAPHQL_PATH,
  PATH_PARAMETERS,
  pathParameterNames,
  pathTo,
  ROUTES,
  routeId,
  routeOf,
  servedBy,
} from '#shared/routes';
import { matchesParamRule, pathParametersValid } from '#shared/validate';

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
    '%s has a handler where it is served (a Lambda module, or an entry of the Git front end)',
    (_, route) => {
      const lambda = existsSync(handlerFile(route.handler));
      if (servedBy(route) === 'api') expect(lambda).toBe(true);
      else expect([lambda, route.handler in GIT_HANDLERS]).toEqual([false, true]);
    },
  );

  it('gives the Git front end a handler for its rows and for nothing else', () => {
    const rows = ROUTES.filter((route) => servedBy(route) === 'git-frontend').map((route) => route.handler);
    expect(rows.length).toBeGreaterThan(0);
    expect(Object.keys(GIT_HANDLERS).sort()).toEqual(rows.sort());
  });

  it('puts REST routes under the API prefix (or at its root) and gives them JSON; GraphQL beside it', () => {
    for (const route of ROUTES.filter((candidate) => candidate.media === 'json')) {
      const rest = route.path === API_PREFIX || route.path.startsWith(`${API_PREFIX}/`);
      expect(rest || route.path === GRAPHQL_PATH, route.path).toBe(true);
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

  it('finds the route an event was sent to by its method and resource template', () => {
    for (const route of ROUTES)
      expect(routeOf({ httpMethod: route.method, resource: route.path })).toBe(route);
    expect(() => routeOf({ httpMethod: 'PATCH', resource: `${API_PREFIX}/user` })).toThrow(/No route/);
  });

  it("fills a route's path from the table, encoding each parameter", () => {
    expect(pathTo('settings/tokens')).toBe('/settings/tokens');
    expect(pathTo('settings/developer-token-revoke', { client_id: 'a/b c', authorization_id: 7 })).toBe(
      '/settings/developers/a%2Fb%20c/authorizations/7/revoke',
    );
    expect(() => pathTo('settings/application', {})).toThrow(/client_id/);
    expect(() => pathTo('no/such-handler')).toThrow(/No route/);
  });

  it.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s has a rule for each of its path parameters',
    (_, route) => {
      for (const name of pathParameterNames(route.path)) expect(PATH_PARAMETERS, name).toHaveProperty(name);
    },
  );
});

describe('path parameter rules', () => {
  const valid: Record<string, string[]> = {
    login: ['a', 'octo-cat', 'A1', 'x'.repeat(39)],
    repo: ['hello-world', '.github', 'a_b.c', 'r'.repeat(100)],
    client_id: ['0123456789abcdef0123'],
    access_token: [`gho_${'a'.repeat(36)}`, 'f'.repeat(40)],
    fingerprint: ['laptop', 'é…', 'f'.repeat(255)],
    key_id: ['1', '42', String(Number.MAX_SAFE_INTEGER)],
  };
  const invalid: Record<string, string[]> = {
    login: ['', '-a', 'a-', 'a--b', 'x'.repeat(40), 'x'.repeat(3000), '\u212Aate', 'a b', 'a%00'],
    repo: ['', 'r'.repeat(101), 'a/b', 'a b', 'é', 'x'.repeat(3000)],
    client_id: ['0123456789abcdef012', '0123456789abcdef01234', '0123456789abcdef012-', 'x'.repeat(3000)],
    access_token: ['', 'a b', 't'.repeat(256), 'é'],
    fingerprint: ['', 'f'.repeat(256), 'a\u0000b', 'a\nb'],
    key_id: ['0', '-1', '01', '1.5', '1e3', '9007199254740992', '9'.repeat(17), 'x'],
  };
  it.each(Object.entries(valid))('accepts good values of {%s}', (name, values) => {
    for (const value of values) expect(matchesParamRule(name, value), value).toBe(true);
  });
  it.each(Object.entries(invalid))('refuses bad values of {%s}', (name, values) => {
    for (const value of values) expect(matchesParamRule(name, value), value.slice(0, 50)).toBe(false);
  });

  it('refuses a parameter without a rule, and a route whose parameter is missing', () => {
    expect(matchesParamRule('no_such_parameter', 'x')).toBe(false);
    expect(pathParametersValid({ path: '/users/{login}' }, {})).toBe(false);
    expect(pathParametersValid({ path: '/users/{login}' }, { login: 'octocat' })).toBe(true);
    expect(pathParametersValid({ path: '/user' }, null)).toBe(true);
  });
});
