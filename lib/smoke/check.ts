import { ROUTES, type Route } from '#shared/routes';

/** What the smoke check is pointed at, from the command line. */
export interface SmokeTarget {
  /** The web origin, `https://host` (output `WebUrl`): the distribution, or `npm start`'s URL. */
  readonly origin: string;
  /** An OAuth token of any scope; never printed. */
  readonly token?: string;
  /** A repository Git must serve; without one, the Git check asks for one that does not exist. */
  readonly repo?: { readonly owner: string; readonly name: string };
  /** The CloudFormation stack the failure messages name resources of. */
  readonly stackName: string;
  /** Deadline of each check's one request. */
  readonly timeoutMs: number;
}

export type Outcome = 'pass' | 'fail' | 'skip';

export interface CheckResult {
  readonly check: string;
  readonly outcome: Outcome;
  /** What was seen and, on a failure, which resource to look at. */
  readonly message: string;
}

export type Check = (target: SmokeTarget) => Promise<CheckResult>;

export const pass = (check: string, message: string): CheckResult => ({ check, outcome: 'pass', message });
export const fail = (check: string, message: string): CheckResult => ({ check, outcome: 'fail', message });

/** The route-table row of a handler: its path is the one the service serves, wherever it runs. */
export function routeOf(handler: string): Route {
  const route = ROUTES.find((candidate) => candidate.handler === handler);
  if (route === undefined) throw new Error(`no route has handler ${handler}`);
  return route;
}

/** A route's path with its parameters filled in, on the target's origin. */
export function urlOf(target: SmokeTarget, route: Route, parameters: Record<string, string> = {}): URL {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(parameters[name] ?? ''),
  );
  return new URL(path, target.origin);
}
