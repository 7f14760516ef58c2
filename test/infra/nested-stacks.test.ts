import { describe, expect, inject, it } from 'vitest';
import { TASKS_STACK_ID } from '#cdk/import-workflow';
import { API_ROUTES } from '#cdk/rest-api';
import { groupRoutes, MAX_ROUTES_PER_GROUP, ROUTE_GROUPS, routeStackId } from '#cdk/route-groups';
import type { Route } from '#shared/routes';
import { loadDeployment } from '#test/deployment';

/** CloudFormation's quotas per stack (nested stacks count alone). */
const LIMITS = { resources: 500, parameters: 200, outputs: 200 } as const;
/** Room left for growth: every stack stays under this share of each quota. */
const HEADROOM = 0.8;

describe('the deployment (the one cdk synth of the infra project)', () => {
  it('keeps every stack, parent and nested, under 80% of the resource, parameter and output quotas', () => {
    const deployment = loadDeployment(inject('cdkOut'), 'OAuthImportService');
    const rows = deployment.stacks.map((stack) => ({
      stack: stack.path === '' ? 'OAuthImportService (parent)' : stack.path,
      resources: Object.keys(stack.template.Resources).length,
      parameters: Object.keys(stack.template.Parameters ?? {}).length,
      outputs: Object.keys(stack.template.Outputs ?? {}).length,
    }));
    console.table(rows);
    expect(
      rows
        .map((row) => row.stack)
        .slice(1)
        .sort(),
    ).toEqual([TASKS_STACK_ID, ...[...groupRoutes(API_ROUTES).keys()].map(routeStackId)].sort());
    for (const row of rows) {
      for (const quota of ['resources', 'parameters', 'outputs'] as const) {
        expect(row[quota], `${row.stack} ${quota}`).toBeLessThan(LIMITS[quota] * HEADROOM);
      }
    }
  });
});

describe('groupRoutes', () => {
  const route = (handler: string): Route => ({
    method: 'GET',
    path: `/${handler}`,
    handler,
    auth: 'none',
    scopes: [],
    media: 'json',
    table: 'RO',
  });

  it('places every route the API serves in exactly one group, in table order', () => {
    const grouped = groupRoutes(API_ROUTES);
    const placed = [...grouped.values()].flat();
    expect(placed).toHaveLength(API_ROUTES.length);
    expect(new Set(placed)).toEqual(new Set(API_ROUTES));
    for (const [group, routes] of grouped) {
      expect(routes).toEqual(API_ROUTES.filter((candidate) => routes.includes(candidate)));
      for (const member of routes) expect(group.folders).toContain(member.handler.split('/')[0]);
      expect(routes.length).toBeLessThanOrEqual(MAX_ROUTES_PER_GROUP);
    }
  });

  it('names each nested stack <group>Routes', () => {
    expect(ROUTE_GROUPS.map(routeStackId)).toEqual([
      'AuthorizationRoutes',
      'AccountRoutes',
      'WebRoutes',
      'ImportRoutes',
      'ImportBatchRoutes',
    ]);
  });

  it('refuses a handler folder no group names', () => {
    expect(() => groupRoutes([route('orgs/list')])).toThrow(
      /handler folder orgs is in no route group; add it to ROUTE_GROUPS/,
    );
  });

  it('refuses a folder in two groups', () => {
    const groups = [
      { name: 'A', folders: ['users'], description: 'a' },
      { name: 'B', folders: ['users'], description: 'b' },
    ];
    expect(() => groupRoutes([route('users/list')], groups)).toThrow(/users is in groups A and B/);
  });

  it('refuses a group above the route limit', () => {
    const routes = Array.from({ length: MAX_ROUTES_PER_GROUP + 1 }, (_, index) => route(`users/r${index}`));
    expect(() => groupRoutes(routes.slice(0, MAX_ROUTES_PER_GROUP))).not.toThrow();
    expect(() => groupRoutes(routes)).toThrow(/Account has 41 routes, more than 40/);
  });
});
