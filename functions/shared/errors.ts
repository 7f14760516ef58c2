/**
 * Typed HTTP errors. Domain and data code throw these; `http-stack.ts` turns them into GitHub's
 * error body in one place. Anything else that escapes a handler is a bug and becomes a 500.
 */

/** GitHub's validation error codes (REST v3 "Client errors"). */
export type FieldErrorCode = 'missing' | 'missing_field' | 'invalid' | 'already_exists' | 'custom';

export interface FieldError {
  readonly resource: string;
  readonly field: string;
  readonly code: FieldErrorCode;
  /** Always present for `custom`. */
  readonly message?: string;
}

export class HttpError extends Error {
  override readonly name: string = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
    readonly details: {
      readonly errors?: readonly FieldError[];
      /** Appended to the configured docs URL, e.g. `#two-factor-authentication`. */
      readonly documentationPath?: string;
      readonly headers?: Readonly<Record<string, string>>;
      /**
       * A 401 a token could have answered: the REST API's stack adds RFC 9728's
       * `WWW-Authenticate: Bearer resource_metadata="…"` so that an OAuth client can find out
       * where to get one.
       */
      readonly bearerChallenge?: true;
    } = {},
  ) {
    super(message);
  }
}

/**
 * How long a client waits before it repeats a request the service could not take now (a 503):
 * a throttled dependency or a throttled route function frees within seconds.
 */
export const RETRY_AFTER_SECONDS = 5;

/**
 * A dependency that still refuses after the SDK's retries (DynamoDB throttling): the request may
 * succeed if repeated later, and nothing of it was written. A route answers GitHub's 503 with
 * `Retry-After`, as API Gateway does for a route whose function Lambda throttles (the same body,
 * `GATEWAY_ERROR_BODIES.serviceUnavailable`); a workflow step throws it under this name, which the
 * ASL's Retry repeats.
 */
export class TransientFailure extends HttpError {
  override readonly name = 'TransientFailure';
  constructor(
    /** What refused, for logs and the workflow (never shown to an API client). */
    readonly reason: string,
    options?: { readonly cause?: unknown },
  ) {
    super(503, GATEWAY_ERROR_BODIES.serviceUnavailable.message, {
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    });
    if (options && 'cause' in options) this.cause = options.cause;
  }
}

export const notFound = (): HttpError => new HttpError(404, 'Not Found');

export const requiresAuthentication = (): HttpError =>
  new HttpError(401, 'Requires authentication', { bearerChallenge: true });

export const badCredentials = (): HttpError =>
  new HttpError(401, 'Bad credentials', { bearerChallenge: true });

export const problemsParsingJson = (): HttpError => new HttpError(400, 'Problems parsing JSON');

export const bodyNotObject = (): HttpError => new HttpError(400, 'Body should be a JSON object');

export const payloadTooLarge = (): HttpError => new HttpError(413, 'Payload Too Large');

export const validationFailed = (errors: readonly FieldError[]): HttpError =>
  new HttpError(422, 'Validation Failed', { errors });

/** Where `documentation_url` points unless DOCS_URL says otherwise. */
export const DEFAULT_DOCS_URL = 'https://docs.github.com/rest';

/**
 * Bodies of the errors answered before any handler runs: by API Gateway's gateway responses in AWS
 * and by the local server's router locally.
 */
export const GATEWAY_ERROR_BODIES = {
  unknownRoute: { message: 'Not Found', documentation_url: DEFAULT_DOCS_URL },
  payloadTooLarge: { message: 'Payload Too Large', documentation_url: DEFAULT_DOCS_URL },
  serverError: { message: 'Server Error', documentation_url: DEFAULT_DOCS_URL },
  /**
   * GitHub's 503: the request was not run and may succeed later (`Retry-After`): a route whose
   * function Lambda throttled, or whose dependency did (`TransientFailure`).
   */
  serviceUnavailable: { message: 'Service Unavailable', documentation_url: DEFAULT_DOCS_URL },
  /** Locally only: a request-target that is not a plain path (`lib/local/http-server.ts`). */
  badRequest: { message: 'Bad Request', documentation_url: DEFAULT_DOCS_URL },
} as const;

/** GitHub's JSON error body for an HttpError. */
export function errorBody(error: HttpError, docsUrl: string): Record<string, unknown> {
  return {
    message: error.message,
    ...(error.details.errors ? { errors: error.details.errors } : {}),
    documentation_url: `${docsUrl}${error.details.documentationPath ?? ''}`,
  };
}
