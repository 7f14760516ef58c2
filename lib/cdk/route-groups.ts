import type { Route } from '#shared/routes';

/**
 * How the route functions are split into nested stacks (CloudFormation allows 500 resources per
 * stack; each route brings five: function, role, policy, log group, invoke permission). A group is
 * a set of handler folders (`functions/http/<folder>/…`), so a route's stack follows from its
 * handler; a new folder must be placed here, or synthesis fails.
 */
export interface RouteGroup {
  /** The nested stack's construct id and CloudFormation logical id: `<name>Routes`. */
  readonly name: string;
  readonly folders: readonly string[];
  /** Shown as the nested stack's description. */
  readonly description: string;
}

/** At most this many routes per group: about 200 of a nested stack's 500 resources. */
export const MAX_ROUTES_PER_GROUP = 40;

export const ROUTE_GROUPS: readonly RouteGroup[] = [
  {
    name: 'Authorization',
    folders: ['authorizations', 'grants', 'applications', 'credentials'],
    description: 'OAuth authorizations and grants API, the application-side token API, credential revocation',
  },
  {
    name: 'Account',
    folders: ['meta', 'graphql', 'users', 'repos', 'keys', 'deploy-keys', 'hooks', 'mcp'],
    description:
      'The API root, GraphQL, users, repositories, SSH keys, deploy keys, webhooks API and the MCP endpoint',
  },
  {
    name: 'Web',
    folders: ['pages', 'settings', 'oauth', 'new-import'],
    description: 'Browser pages: home, sign-in, settings, the OAuth web flow and the import form',
  },
  {
    name: 'Import',
    folders: ['imports', 'import-page'],
    description: 'Source import API and the import page',
  },
  {
    name: 'ImportBatch',
    folders: ['import-batches', 'batch-page'],
    description: 'Import batches API and the batch dashboard',
  },
  // No group for `git/`: the Git front end serves those rows (`servedBy: 'git-frontend'`).
];

/** The nested stack of a group (construct id and logical id). */
export const routeStackId = (group: Pick<RouteGroup, 'name'>): string => `${group.name}Routes`;

/** `imports/start` → `imports`. */
export const handlerFolder = (route: Pick<Route, 'handler'>): string => route.handler.split('/')[0] ?? '';

/**
 * The routes of each group, in route-table order; groups without routes are left out. Throws on a
 * handler folder no group names, a folder two groups name, or a group above `MAX_ROUTES_PER_GROUP`.
 */
export function groupRoutes(
  routes: readonly Route[],
  groups: readonly RouteGroup[] = ROUTE_GROUPS,
): Map<RouteGroup, Route[]> {
  const groupOf = new Map<string, RouteGroup>();
  for (const group of groups) {
    for (const folder of group.folders) {
      const other = groupOf.get(folder);
      if (other !== undefined)
        throw new Error(`handler folder ${folder} is in groups ${other.name} and ${group.name}`);
      groupOf.set(folder, group);
    }
  }
  const grouped = new Map<RouteGroup, Route[]>();
  for (const route of routes) {
    const group = groupOf.get(handlerFolder(route));
    if (group === undefined) {
      throw new Error(
        `${route.method} ${route.path}: handler folder ${handlerFolder(route)} is in no route group; add it to ROUTE_GROUPS in lib/cdk/route-groups.ts`,
      );
    }
    grouped.set(group, [...(grouped.get(group) ?? []), route]);
  }
  for (const [group, members] of grouped) {
    if (members.length > MAX_ROUTES_PER_GROUP) {
      throw new Error(
        `route group ${group.name} has ${members.length} routes, more than ${MAX_ROUTES_PER_GROUP}; split it in lib/cdk/route-groups.ts`,
      );
    }
  }
  return grouped;
}
