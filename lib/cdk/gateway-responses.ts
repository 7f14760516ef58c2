/**
 * API Gateway's own answers, in GitHub's JSON error shape: the REST API's gateway responses
 * (`rest-api.ts` deploys them) and what the local API Gateway answers for the same errors
 * (`lib/local/http-server.ts`), from this one table. Plain data: no CDK types.
 */
import { GATEWAY_ERROR_BODIES, RETRY_AFTER_SECONDS } from '#shared/errors';

/** The gateway response types this stack sets or the local gateway meets (API Gateway's names). */
export type GatewayResponseType =
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'REQUEST_TOO_LARGE'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponseSpec {
  /** The construct id. */
  readonly id: string;
  readonly type: GatewayResponseType;
  /** Undefined: the error's own status is kept. */
  readonly statusCode?: number;
  /** Besides `Content-Type`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, string>>;
}

export const GATEWAY_CONTENT_TYPE = 'application/json; charset=utf-8';

export const GATEWAY_RESPONSES: readonly GatewayResponseSpec[] = [
  // API Gateway answers an unknown path, or an unknown method on a known path, with 403
  // "Missing Authentication Token"; GitHub answers both with 404.
  {
    id: 'NotFound',
    type: 'MISSING_AUTHENTICATION_TOKEN',
    statusCode: 404,
    headers: {},
    body: GATEWAY_ERROR_BODIES.unknownRoute,
  },
  {
    id: 'PayloadTooLarge',
    type: 'REQUEST_TOO_LARGE',
    statusCode: 413,
    headers: {},
    body: GATEWAY_ERROR_BODIES.payloadTooLarge,
  },
  // Lambda refused to run the route's function: its concurrency (reserved, or the account's) is
  // reached, 429 TooManyRequestsException. API Gateway's type for it is INTEGRATION_FAILURE, whose
  // default is 500 "Internal server error" (AWS Lambda Developer Guide, "Handling Lambda errors
  // with an API Gateway API"). Nothing ran: GitHub's 503, to be repeated after `Retry-After`.
  {
    id: 'FunctionThrottled',
    type: 'INTEGRATION_FAILURE',
    statusCode: 503,
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    body: GATEWAY_ERROR_BODIES.serviceUnavailable,
  },
  // No status code: the original 500/502/504 is kept.
  { id: 'ServerError', type: 'DEFAULT_5XX', headers: {}, body: GATEWAY_ERROR_BODIES.serverError },
];

export interface GatewayAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, string>>;
}

/**
 * What API Gateway answers for an error of `type` whose own status is `status`, given the
 * responses above: the type's response, else the DEFAULT_4XX or DEFAULT_5XX one, its status if it
 * sets one; with none of them, API Gateway's default body.
 */
export function gatewayAnswer(type: GatewayResponseType, status: number): GatewayAnswer {
  const fallback = status < 500 ? 'DEFAULT_4XX' : 'DEFAULT_5XX';
  const spec =
    GATEWAY_RESPONSES.find((response) => response.type === type) ??
    GATEWAY_RESPONSES.find((response) => response.type === fallback);
  return {
    status: spec?.statusCode ?? status,
    headers: { 'Content-Type': GATEWAY_CONTENT_TYPE, ...spec?.headers },
    body: spec?.body ?? { message: status < 500 ? 'Forbidden' : 'Internal server error' },
  };
}
