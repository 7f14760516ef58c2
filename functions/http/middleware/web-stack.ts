import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { newSecret, type Session, sameSecret } from '#domain/sessions';
import type { User } from '#domain/users';
import { userNamed } from '#services/accounts';
import { setRequestActor } from '#services/request-scope';
import { getSession } from '#services/sessions';
import { config } from '#shared/config';
import { cookieName, parseCookies, serializeCookie } from '#shared/cookies';
import { header } from '#shared/credentials';
import { errorPage, NOT_FOUND_MESSAGE, tooLargeMessage } from '#shared/error-page';
import { HttpError } from '#shared/errors';
import type { Html } from '#shared/html';
import { logContext, logUnhandled } from '#shared/log';
import { csrfField, page, STYLE_HASH } from '#shared/page-layout';
import type { Route } from '#shared/routes';
import { type PublicUrls, publicUrls } from '#shared/urls';
import { bodyLimit, pathParameters } from './http-stack.ts';
import { type MultipartForm, parseMultipart, type UploadedFile } from './multipart-form.ts';
import { perRoute } from './per-route.ts';

/** What a page handler gets; `along` is what the route's `readWithUser` read (see `WebOptions`). */
export interface WebRequest<Along = unknown> {
  readonly method: string;
  /** The form fields of a POST (application/x-www-form-urlencoded or multipart/form-data). */
  readonly form: URLSearchParams;
  /** The files of a multipart/form-data POST, by field name (none for other bodies). */
  readonly files: ReadonlyMap<string, UploadedFile>;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly params: Readonly<Record<string, string>>;
  /** A signed-in session (two-factor complete) and its user. */
  readonly session: Session | undefined;
  readonly user: User | undefined;
  /** A session whose password step is done and whose one-time code is still owed. */
  readonly pending: Session | undefined;
  /** The CSRF token to put in this response's forms. */
  readonly csrf: string;
  /** Whether the site is served over https (cookies get Secure and `__Host-`). */
  readonly secure: boolean;
  readonly urls: PublicUrls;
  readonly event: APIGatewayProxyEvent;
  /** Read with the signed-in user (absent when signed out or the route reads nothing along). */
  readonly along?: Along;
}

/**
 * A page's reads that only need the signed-in user's login and the request: the stack makes them
 * in the round trip that reads the user (the function returns the user with them), instead of the
 * page making them after. Undefined for a request that needs nothing along.
 */
export interface WebOptions<Along> {
  readonly readWithUser?: (request: {
    readonly query: Readonly<Record<string, string | undefined>>;
    readonly form: URLSearchParams;
  }) => ((login: string) => Promise<{ readonly user: User | undefined; readonly along: Along }>) | undefined;
}

/** An HTML page. */
export interface WebPage {
  readonly status?: number;
  readonly title: string;
  readonly body: Html;
  /** Origins a form on this page may end up at (its POST redirects there); CSP form-action. */
  readonly formActions?: readonly string[];
  /**
   * CSP hashes (`'sha256-…'`) of the inline scripts the page carries. A page with scripts may
   * also fetch from its own origin (`connect-src 'self'`); pages without stay script-free.
   */
  readonly scriptHashes?: readonly string[];
  readonly cookies?: readonly string[];
}

/**
 * A page, a redirect, a file to save (`Content-Disposition: attachment`), or a small JSON answer
 * for a page's own script (`json`); any may set cookies.
 */
export type WebReply =
  | WebPage
  | { readonly json: unknown; readonly status?: number; readonly cookies?: readonly string[] }
  | { readonly location: string; readonly status?: 302 | 303; readonly cookies?: readonly string[] }
  | {
      readonly download: { readonly contentType: string; readonly filename: string; readonly body: string };
      readonly cookies?: readonly string[];
    };

type WebEvent = APIGatewayProxyEvent & { web?: WebRequest<unknown>; newCsrfCookie?: string };

const SESSION_COOKIE = 'session';
const CSRF_COOKIE = 'csrf';

export function securityHeaders(
  formActions: readonly string[] = [],
  scriptHashes: readonly string[] = [],
): Record<string, string> {
  const csp = [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    ...(scriptHashes.length > 0 ? [`script-src ${scriptHashes.join(' ')}`, "connect-src 'self'"] : []),
    "img-src 'self' data:",
    `form-action 'self'${formActions.map((origin) => ` ${origin}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return {
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
}

/**
 * Pages and handlers write site paths (`/login`, `href="/settings/tokens"`). When the site is
 * served below a base path (API Gateway's default URL ends in the stage, `/prod`), the stack puts
 * that base in front of every such path, in redirects and in the rendered `href`/`action`
 * attributes. User content cannot produce those attributes: `html` escapes its quotes.
 */
export function withBasePath(basePath: string, markup: string): string {
  return basePath ? markup.replace(/ (href|action)="\/(?!\/)/g, ` $1="${basePath}/`) : markup;
}

const basePathOf = (event: WebEvent): string =>
  new URL(event.web?.urls.auth ?? publicUrls(config(), event).auth).pathname.replace(/\/$/, '');

function toResult(reply: WebReply, event: WebEvent): APIGatewayProxyResult {
  const basePath = basePathOf(event);
  const cookies = [...(reply.cookies ?? [])];
  if (event.newCsrfCookie) cookies.push(event.newCsrfCookie);
  const multiValueHeaders = cookies.length > 0 ? { 'Set-Cookie': cookies } : undefined;
  if ('location' in reply) {
    const sitePath = reply.location.startsWith('/') && !reply.location.startsWith('//');
    return {
      statusCode: reply.status ?? 302,
      headers: { Location: sitePath ? `${basePath}${reply.location}` : reply.location, ...securityHeaders() },
      ...(multiValueHeaders ? { multiValueHeaders } : {}),
      body: '',
    };
  }
  if ('json' in reply) {
    return {
      statusCode: reply.status ?? 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8', ...securityHeaders() },
      ...(multiValueHeaders ? { multiValueHeaders } : {}),
      body: JSON.stringify(reply.json),
    };
  }
  if ('download' in reply) {
    const { contentType, filename, body } = reply.download;
    return {
      statusCode: 200,
      headers: {
        'Content-Type': contentType,
        'Content-Disposition': `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
        ...securityHeaders(),
      },
      ...(multiValueHeaders ? { multiValueHeaders } : {}),
      body,
    };
  }
  const context = { login: event.web?.user?.login, csrf: event.web?.csrf ?? '' };
  return {
    statusCode: reply.status ?? 200,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      ...securityHeaders(reply.formActions, reply.scriptHashes),
    },
    ...(multiValueHeaders ? { multiValueHeaders } : {}),
    body: withBasePath(basePath, page(reply.title, context, reply.body).toString()),
  };
}

/** A page's words for a body over the bound (a file too large, mostly); the API keeps GitHub's. */
const pageTooLarge = () => new HttpError(413, tooLargeMessage(config().maxBodyBytes));

const NO_FILES: ReadonlyMap<string, UploadedFile> = new Map();

/**
 * A POST's fields (and files): multipart/form-data through `parseMultipart` (its refusals are
 * error pages), anything else as url-encoded. Both carry the CSRF token as the `_csrf` field.
 */
async function formOf(event: APIGatewayProxyEvent): Promise<MultipartForm> {
  const bytes = event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : undefined;
  const contentType = header(event, 'content-type');
  if (bytes && event.httpMethod === 'POST' && /^multipart\/form-data\s*(;|$)/i.test(contentType ?? ''))
    return parseMultipart(contentType as string, bytes);
  return { fields: new URLSearchParams(bytes?.toString('utf8') ?? ''), files: NO_FILES };
}

/** Reads the session and CSRF cookies, and refuses cross-site or token-less form posts. */
const webContext = <Along>(options: WebOptions<Along>): middy.MiddlewareObj<WebEvent> => ({
  before: async ({ event }) => {
    const urls = publicUrls(config(), event);
    const secure = urls.auth.startsWith('https:');
    const cookies = parseCookies(header(event, 'cookie'));
    const sessionCookie = cookies.get(cookieName(SESSION_COOKIE, secure));
    const found = sessionCookie ? await getSession(sessionCookie) : undefined;
    const session = found && !found.pendingOtp ? found : undefined;
    const pending = found?.pendingOtp ? found : undefined;
    const { fields: form, files } = await formOf(event);
    const query = event.queryStringParameters ?? {};
    const readAlong = session ? options.readWithUser?.({ query, form }) : undefined;
    const read = session
      ? readAlong
        ? await readAlong(session.login)
        : { user: await userNamed(session.login), along: undefined }
      : undefined;
    const user = read?.user;
    if (user) setRequestActor({ kind: 'user', login: user.login });

    let csrfCookie = cookies.get(cookieName(CSRF_COOKIE, secure));
    if (!csrfCookie) {
      csrfCookie = newSecret();
      event.newCsrfCookie = serializeCookie(CSRF_COOKIE, csrfCookie, { secure });
    }
    const csrf = (user ? session?.csrf : pending?.csrf) ?? csrfCookie;
    event.web = {
      method: event.httpMethod,
      form,
      files,
      query,
      params: (event.pathParameters ?? {}) as Record<string, string>,
      session: user ? session : undefined,
      user,
      pending,
      csrf,
      secure,
      urls,
      event,
      ...(user && read?.along !== undefined ? { along: read.along } : {}),
    };

    if (event.httpMethod === 'POST') {
      const origin = header(event, 'origin');
      if (origin && origin !== 'null' && origin !== new URL(urls.auth).origin)
        throw new HttpError(403, 'Cross-site form submissions are refused.');
      if (!sameSecret(form.get('_csrf') ?? undefined, csrf)) {
        throw new HttpError(
          403,
          'This form has expired or did not come from this site. Go back, reload the page and try again.',
        );
      }
    }
  },
});

const webResponse = (route: Route): middy.MiddlewareObj<WebEvent, APIGatewayProxyResult> => ({
  after: (request) => {
    request.response = toResult(request.response as unknown as WebReply, request.event);
  },
  onError: (request) => {
    const { error } = request;
    const known = error instanceof HttpError;
    if (!known) {
      logUnhandled(route.handler, request.context?.awsRequestId, error);
    }
    const status = known ? error.status : 500;
    const message = known
      ? status === 404
        ? NOT_FOUND_MESSAGE
        : error.message
      : 'Something went wrong on our side. Nothing you did caused it; please try again in a moment.';
    request.response = toResult(
      errorPage(status, message, request.event.web?.user !== undefined),
      request.event,
    );
  },
});

/** Builds a page route's handler: path parameters → body limit → cookies, session and CSRF → the page → HTML. */
export function webHandler<Along = undefined>(
  run: (request: WebRequest<Along>) => Promise<WebReply>,
  options: WebOptions<Along> = {},
) {
  return perRoute((route) =>
    middy<WebEvent, APIGatewayProxyResult>()
      .use(logContext())
      .use(webResponse(route))
      .use(pathParameters(route))
      .use(bodyLimit(pageTooLarge))
      .use(webContext(options))
      .handler(
        async (event) => (await run(event.web as WebRequest<Along>)) as unknown as APIGatewayProxyResult,
      ),
  );
}

/** The session cookie to set after signing in (or to clear with `maxAgeSeconds: 0`). */
export const sessionCookie = (value: string, secure: boolean, maxAgeSeconds?: number): string =>
  serializeCookie(SESSION_COOKIE, value, {
    secure,
    ...(maxAgeSeconds !== undefined ? { maxAgeSeconds } : {}),
  });

export { csrfField };
