/**
 * The TFVC REST client: GET with Basic auth through the network guard, Azure DevOps' throttling
 * answered as told, and the readers of its JSON answers (`{count, value}` lists). Credentials
 * travel only in the `Authorization` header, never in a URL, a log or a message.
 */
import { type Guard, type GuardedResponse, guardedRequest } from '#vcs/network-guard';
import { type OriginAccess, OriginAuthFailed, OriginFailed } from '#vcs/origin';

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
 * One API call during the import: its JSON, or an error the user may read. With `missingOk`, a
 * 404 (or another non-JSON answer) is undefined instead of an error.
 */
export async function call(
  api: ApiClient,
  url: string,
  access: OriginAccess,
  missingOk = false,
): Promise<unknown> {
  const response = await api.get(url);
  if (wantsCredentials(response) || response.status === 403) throw authError(access);
  if (response.truncated) throw new OriginFailed('The origin sent an answer larger than the importer reads');
  const json = jsonOf(response);
  if (json !== undefined) return json;
  if (missingOk) return undefined;
  const where = new URL(url);
  if (response.status === 404)
    throw new OriginFailed(
      `The origin ${where.host} answered 404 for ${where.pathname}: not a TFVC collection`,
    );
  throw new OriginFailed(
    `The origin ${where.host} answered ${response.status} ${contentType(response) || 'without a type'} for ${where.pathname}, not the TFVC API's JSON`,
  );
}

export const authError = (access: OriginAccess) =>
  new OriginAuthFailed(
    access.credentials === undefined
      ? 'The origin requires a username and password (a personal access token as the password)'
      : 'The origin refused the username and password',
  );
