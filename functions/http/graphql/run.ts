import {
  type DocumentNode,
  execute,
  GraphQLError,
  type GraphQLFormattedError,
  parse,
  validate,
} from 'graphql';
import type { PublicUrls } from '#shared/urls';
import { type GraphqlCaller, rootValue } from './resolvers.ts';
import { schema } from './schema.ts';

/** What a GraphQL request may carry (GraphQL over HTTP); checked here, not by the REST validator. */
export interface GraphqlRequest {
  readonly query?: unknown;
  readonly variables?: unknown;
  readonly operationName?: unknown;
}

/** A GraphQL response body: `data` and/or `errors`, GraphQL's own shape. */
export interface GraphqlResponse {
  readonly data?: unknown;
  readonly errors?: readonly (GraphQLFormattedError & { readonly type?: string })[];
}

/**
 * Tokens a document may have: gh's largest query is about 60, an introspection query about 300.
 * The parser stops at the limit, so an oversized document costs no more than this to refuse.
 */
export const MAX_QUERY_TOKENS = 2_000;

/**
 * GraphQL's error shape, plus GitHub's `type` (`NOT_FOUND`, …) where a resolver gave one. A
 * resolver's unexpected failure (a database error) is not an answer: it is rethrown, so the stack
 * logs it and answers its generic 500 without the failure's words.
 */
function formatted(error: GraphQLError) {
  const { originalError } = error;
  if (originalError && !(originalError instanceof GraphQLError)) throw originalError;
  const { extensions, ...rest } = error.toJSON();
  const type = typeof extensions?.type === 'string' ? extensions.type : undefined;
  return type ? { type, ...rest } : rest;
}

const requestError = (message: string): GraphqlResponse => ({ errors: [{ message }] });

/** Parses, validates and executes one request against the schema, for an authenticated user. */
export async function runGraphql(
  request: GraphqlRequest,
  caller: GraphqlCaller,
  urls: PublicUrls,
): Promise<GraphqlResponse> {
  const { query, variables, operationName } = request;
  if (typeof query !== 'string')
    return requestError('A query attribute must be specified and must be a string.');
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables)))
    return requestError('Variables must be an object.');
  if (operationName != null && typeof operationName !== 'string')
    return requestError('operationName must be a string.');
  let document: DocumentNode;
  try {
    document = parse(query, { maxTokens: MAX_QUERY_TOKENS });
  } catch (error) {
    if (error instanceof GraphQLError) return { errors: [formatted(error)] };
    throw error;
  }
  const invalid = validate(schema, document);
  if (invalid.length > 0) return { errors: invalid.map(formatted) };
  const result = await execute({
    schema,
    document,
    rootValue: rootValue(caller, urls),
    variableValues: (variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: operationName ?? undefined,
  });
  return {
    ...(result.data === undefined ? {} : { data: result.data }),
    ...(result.errors ? { errors: result.errors.map(formatted) } : {}),
  };
}
