/**
 * The TFVC REST client: GET with Basic auth through the network guard, Azure DevOps' throttling
 * answered as told, and the readers of its JSON answers (`{count, value}` lists). Credentials
 * travel only in the `Authorization` header, never in a URL, a log or a message.
 */
import { redactCredentials } from '#vcs/bounded-process';
import { type Guard, type GuardedResponse, guardedRequest } from '#vcs/network-guard';
import { ForbiddenAddress, type OriginAccess, OriginAuthFailed, OriginFailed } from '#vcs/origin';

export const TFVC_API_VERSION = '6.0';

export interface ApiClient {
  /**
   * GET `url` with Basic auth, accepting `accept` (JSON unless told); the raw answer (transport
   * failures throw).
   */
  get(url: string, maxBytes?: number, accept?: string): Promise<GuardedResponse>;
}

export function apiClient(access: OriginAccess, guard: Guard, timeoutMs: number): ApiClient {
  const common: Record<string, string> = {
    'user-agent': 'source-import (tfvc)',
    ...(access.credentials
      ? {
          authorization: `Basic ${Buffer.from(`${access.credentials.username}:${access.credentials.password}`).toString('base64')}`,
        }
      : {}),
  };
  return {
    async get(url, maxBytes = 16 * 1024 * 1024, accept = 'application/json') {
      const headers = { ...common, accept };
      for (let attempt = 0; ; attempt++) {
        const response = await guardedRequest(url, guard, { headers, timeoutMs, maxBytes });
        if (!THROTTLED.has(response.status) || attempt >= 3) return response;
        // Azure DevOps throttles with 429 (or 503) and Retry-After: wait as told, at most 30 s, then retry.
        const after = Number(response.headers['retry-after']);
        const waitMs = Math.min(
          Number.isFinite(after) && after > 0 ? after * 1000 : 2000 * (attempt + 1),
          30_000,
        );
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    },
  };
}

const THROTTLED = new Set([429, 503]);

/** `base` + `/_apis/…` + a query whose names keep their `$` and whose values are encoded. */
export function apiUrl(base: string, path: string, query: Readonly<Record<string, string | number>>): string {
  const pairs = Object.entries({ ...query, 'api-version': TFVC_API_VERSION }).map(
    ([name, value]) => `${name}=${encodeURIComponent(String(value))}`,
  );
  return `${base}/${path}?${pairs.join('&')}`;
}

export const contentType = (response: GuardedResponse) =>
  String(response.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();

/** 401, or 203 with Azure DevOps' sign-in page for an anonymous caller. */
export const wantsCredentials = (response: GuardedResponse) =>
  response.status === 401 || response.status === 203;

/** The JSON body of a 200 `application/json` answer, else undefined. */
export function jsonOf(response: GuardedResponse): unknown {
  if (response.status !== 200 || contentType(response) !== 'application/json' || response.truncated)
    return undefined;
  try {
    return JSON.parse(response.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{count, value: [...]}`: the API's list envelope. */
export function listOf(value: unknown): Record<string, unknown>[] | undefined {
  if (!isRecord(value) || !Array.isArray(value.value)) return undefined;
  return value.value.filter(isRecord);
}

/**
 * A GET made by an import step (`step` names it for the user: "Reading the content of $/p/x at
 * changeset 4"): the answer, or an `OriginFailed` naming the step when the request itself fails.
 */
export async function request(
  api: ApiClient,
  url: string,
  step: string,
  maxBytes?: number,
  accept?: string,
): Promise<GuardedResponse> {
  try {
    return await api.get(url, maxBytes, accept);
  } catch (error) {
    if (error instanceof OriginFailed && !(error instanceof ForbiddenAddress))
      throw new OriginFailed(`${step} failed: ${error.message}`);
    throw error;
  }
}

/**
 * One API call during the import: its JSON, or an error the user may read. With `missingOk`, a
 * 404 (or another non-JSON answer) is undefined instead of an error.
 */
export async function call(
  api: ApiClient,
  url: string,
  access: OriginAccess,
  step: string,
  missingOk = false,
): Promise<unknown> {
  const response = await request(api, url, step);
  if (wantsCredentials(response) || response.status === 403) throw authError(access);
  if (response.truncated)
    throw new OriginFailed(`${step} failed: the answer is larger than the importer reads`);
  const json = jsonOf(response);
  if (json !== undefined) return json;
  if (missingOk) return undefined;
  throw answerError(step, response, access);
}

/**
 * A step's failure on an answer that is not what it asked for: the status and the server's own
 * words (its JSON error body's `message`, or a short plain-text body), credentials removed.
 */
export function answerError(step: string, response: GuardedResponse, access: OriginAccess): OriginFailed {
  const words = originWords(response, access);
  if (words !== undefined)
    return new OriginFailed(`${step} failed: the origin answered ${response.status}: ${words}`);
  const where = new URL(response.url);
  const kind = contentType(response) || 'without a type';
  return new OriginFailed(
    response.status === 404
      ? `${step} failed: the origin ${where.host} answered 404 for ${where.pathname}: not a TFVC collection`
      : `${step} failed: the origin ${where.host} answered ${response.status} ${kind} for ${where.pathname}, not the TFVC API's JSON`,
  );
}

const MAX_WORDS = 300;

/** The server's own words in an error answer, fit to show: no credentials, one line, bounded. */
function originWords(response: GuardedResponse, access: OriginAccess): string | undefined {
  const type = contentType(response);
  let words: string | undefined;
  if (type === 'application/json') {
    try {
      const body = JSON.parse(response.body.toString('utf8')) as unknown;
      if (isRecord(body) && typeof body.message === 'string') words = body.message;
    } catch {
      // not the API's error body
    }
  } else if (type === 'text/plain') words = response.body.toString('utf8');
  if (words === undefined) return undefined;
  let text = redactCredentials(words).replace(/\s+/g, ' ').trim();
  const password = access.credentials?.password;
  if (password) {
    const basic = Buffer.from(`${access.credentials?.username}:${password}`).toString('base64');
    for (const secret of [password, encodeURIComponent(password), basic])
      text = text.split(secret).join('***');
  }
  if (text === '') return undefined;
  return text.length > MAX_WORDS ? `${text.slice(0, MAX_WORDS - 1)}…` : text;
}

export const authError = (access: OriginAccess) =>
  new OriginAuthFailed(
    access.credentials === undefined
      ? 'The origin requires a username and password (a personal access token as the password)'
      : 'The origin refused the username and password',
  );
