/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a `client_id` that
 * is an https URL names a JSON document, served by the client, that describes it. Pure rules: which
 * URLs may be client ids, what a document must say, and how long a fetched one is fresh. The fetch
 * itself (through the network guard) is `services/client-documents.ts`.
 */

/** Largest document read (the draft suggests 5 KB; real ones are well under 2 KB). */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
/** The whole fetch, connection included. */
export const DOCUMENT_TIMEOUT_MS = 5_000;
/** Longest client id URL (it is a key of the client's record and travels in every request). */
export const MAX_CLIENT_ID_URL_LENGTH = 255;
/** Freshness of a fetched document without caching headers, and its bounds whatever they say. */
export const DEFAULT_DOCUMENT_SECONDS = 300;
export const MIN_DOCUMENT_SECONDS = 60;
export const MAX_DOCUMENT_SECONDS = 86_400;
/**
 * Document fetches one caller address may cause per window: an authorize request (signed out
 * too) with a stale or unknown document URL makes the service fetch it, so a caller could
 * otherwise have it fetch any number of URLs.
 */
export const DOCUMENT_FETCHES_PER_WINDOW = 30;
export const DOCUMENT_FETCH_WINDOW_SECONDS = 300;
export const documentFetchWindow = (nowMs: number): number =>
  Math.floor(nowMs / 1000 / DOCUMENT_FETCH_WINDOW_SECONDS);

/** Most redirect URIs a document may list. */
export const MAX_REDIRECT_URIS = 10;

/** Quick test: could this `client_id` be a metadata document URL (before any rule is applied)? */
export const looksLikeClientIdUrl = (clientId: string): boolean => /^https?:\/\//i.test(clientId);

/**
 * The draft's §3 rules for the URL: https, a path, no dot segments, no fragment, no credentials, no
 * query (a SHOULD NOT we make a MUST). `http` only for a host in `httpHosts`: the loopback
 * addresses the local stack and the tests may reach (config `ORIGIN_ALLOWED_ADDRESSES`; empty in
 * AWS, where every client id URL is https).
 */
export function isClientIdUrl(clientId: string, httpHosts: readonly string[] = []): boolean {
  if (clientId.length > MAX_CLIENT_ID_URL_LENGTH || /[\s\\]/.test(clientId)) return false;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const schemeOk = url.protocol === 'https:' || (url.protocol === 'http:' && httpHosts.includes(host));
  if (!schemeOk || url.username || url.password || url.hash || url.search) return false;
  if (clientId.includes('#') || clientId.includes('?')) return false;
  const rawPath = clientId.slice(clientId.indexOf('//') + 2).replace(/^[^/]*/, '');
  if (rawPath === '' || rawPath === '/') return false;
  if (rawPath.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment))) return false;
  // The URL exactly as the client wrote it must be what parsing gives back (no normalization games).
  return url.href === clientId;
}

/** What this server keeps of a valid document. */
export interface ClientMetadata {
  readonly clientId: string;
  readonly name: string;
  readonly clientUri: string | null;
  readonly redirectUris: readonly string[];
}

export type DocumentCheck =
  | { readonly ok: true; readonly metadata: ClientMetadata }
  | { readonly ok: false; readonly reason: string };

const isString = (value: unknown): value is string => typeof value === 'string';

/** An absolute http(s) URI with no fragment: what a listed redirect URI must be. */
export function isRedirectUriValue(value: string): boolean {
  if (value.length > 2048 || /[\s\\#]/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
  } catch {
    return false;
  }
}

/**
 * The draft's §4 rules for a fetched document: a JSON object whose `client_id` equals the URL it
 * came from (plain string comparison), with no `client_secret` (nor its expiry), a public client
 * (`token_endpoint_auth_method` absent or `none`: this server takes no keys from a document), and
 * `redirect_uris` this server can send a browser to.
 */
export function checkClientDocument(url: string, body: unknown): DocumentCheck {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { ok: false, reason: 'The client metadata document is not a JSON object.' };
  const doc = body as Record<string, unknown>;
  if (doc.client_id !== url)
    return { ok: false, reason: 'The client metadata document names another client_id than its own URL.' };
  if ('client_secret' in doc || 'client_secret_expires_at' in doc)
    return { ok: false, reason: 'A client metadata document must not contain a client_secret.' };
  const method = doc.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none')
    return {
      ok: false,
      reason: 'Only public clients (token_endpoint_auth_method "none") may use a metadata document here.',
    };
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS)
    return {
      ok: false,
      reason: `The client metadata document must list 1 to ${MAX_REDIRECT_URIS} redirect_uris.`,
    };
  if (!uris.every((uri) => isString(uri) && isRedirectUriValue(uri)))
    return { ok: false, reason: 'Every redirect_uri must be an absolute http(s) URI without a fragment.' };
  const name =
    isString(doc.client_name) && doc.client_name.trim() !== ''
      ? doc.client_name.trim().slice(0, 100)
      : new URL(url).host;
  const clientUri = isString(doc.client_uri) && isRedirectUriValue(doc.client_uri) ? doc.client_uri : null;
  return { ok: true, metadata: { clientId: url, name, clientUri, redirectUris: uris as string[] } };
}

/**
 * How long a fetched document stays fresh, from its `Cache-Control` (`max-age`; `no-store` and
 * `no-cache` mean as short as allowed), clamped to [`MIN_DOCUMENT_SECONDS`, `MAX_DOCUMENT_SECONDS`]
 * so that a client can neither make every authorize request fetch nor keep a stale document forever.
 */
export function documentLifetimeSeconds(cacheControl: string | undefined): number {
  const directives = (cacheControl ?? '')
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return MIN_DOCUMENT_SECONDS;
  const maxAge = directives.find((d) => d.startsWith('max-age='));
  const seconds = maxAge ? Number.parseInt(maxAge.slice('max-age='.length), 10) : Number.NaN;
  const wanted = Number.isFinite(seconds) && seconds >= 0 ? seconds : DEFAULT_DOCUMENT_SECONDS;
  return Math.min(MAX_DOCUMENT_SECONDS, Math.max(MIN_DOCUMENT_SECONDS, wanted));
}
