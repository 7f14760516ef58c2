import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { inRequestScope } from '#services/request-scope';
import { type Route, routeOf } from '#shared/routes';

type Handler<Result> = (event: APIGatewayProxyEvent, context: Context) => Promise<Result>;

/**
 * A Lambda handler whose middleware stack is built, once, for the route of the first event it
 * serves. A function serves exactly one route (the route table maps each row to its own handler
 * module), so the route never has to be written in the handler, where it could name another row.
 * Each event is handled in its own request scope (`services/request-scope.ts`: who and from where,
 * for the security log).
 */
export function perRoute<Result>(build: (route: Route) => Handler<Result>): Handler<Result> {
  let built: Handler<Result> | undefined;
  return (event, context) => {
    built ??= build(routeOf(event));
    const run = built;
    return inRequestScope(event, () => run(event, context));
  };
}
