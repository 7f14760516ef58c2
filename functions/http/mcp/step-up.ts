import { bearerChallenge } from '#domain/resources';
import { scopeHeader } from '#domain/scopes';
import { callerHasScope } from '#services/authenticate';
import { HttpError } from '#shared/errors';
import { routeFor } from '#shared/routes';
import type { McpCaller } from './caller.ts';
import { toolNamed } from './tools/index.ts';

/** A JSON-RPC message as far as this check reads it. */
interface Message {
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: { readonly name?: unknown };
}

/** The scopes a tool's REST route accepts (any one of them will do). */
export const toolScopes = (name: string): readonly string[] => {
  const tool = toolNamed(name);
  return tool ? routeFor(tool.mirrors).scopes : [];
};

/**
 * The first `tools/call` whose route needs a scope the token lacks: it is refused before anything runs, at the
 * HTTP level, so that an MCP client can step up (MCP 2025-11-25, "Scope challenge handling"): 403
 * with `WWW-Authenticate: Bearer error="insufficient_scope", scope="<the route's widest scope>"`.
 * The body is a JSON-RPC error for that request's id, with GitHub's words for a token without the
 * scopes a query needs. Other methods (initialize, tools/list) need no scope.
 */
export function missingScope(
  parsed: unknown,
  caller: McpCaller,
  resource: string,
): { readonly id: unknown; readonly error: HttpError } | undefined {
  const messages = (Array.isArray(parsed) ? parsed : [parsed]) as Message[];
  for (const message of messages) {
    if (message === null || typeof message !== 'object' || message.method !== 'tools/call') continue;
    const tool = toolNamed(message.params?.name);
    if (!tool) continue;
    const accepted = toolScopes(tool.name);
    if (accepted.length === 0 || callerHasScope(caller, accepted)) continue;
    const wanted = accepted.at(-1) ?? '';
    const granted = scopeHeader(caller.token.scopes);
    const error = new HttpError(
      403,
      `Your token has not been granted the required scopes to call the tool '${tool.name}'. It requires one of the following scopes: ${accepted.join(', ')}, but your token has only been granted: ${granted || 'no scopes'}.`,
      {
        headers: {
          'WWW-Authenticate': bearerChallenge(resource, { error: 'insufficient_scope', scope: wanted }),
        },
      },
    );
    return { id: message.id ?? null, error };
  }
  return undefined;
}
