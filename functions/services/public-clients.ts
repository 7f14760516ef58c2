/**
 * Clients that are not registered here by a person: those named by a Client ID Metadata Document
 * URL (fetched through the network guard, kept as the client's item while fresh) and those that
 * registered themselves (RFC 7591, when an administrator allows it). Both are public clients.
 */

import { getApp, type StoredApp } from '#data/apps';
import {
  countDocumentFetch,
  countRegistration,
  getServiceSwitch,
  type ServiceSwitch,
  saveDocumentClient,
  saveDynamicClient,
  setServiceSwitch,
} from '#data/public-clients';
import { isLapsed, newClientId } from '#domain/apps';
import {
  checkClientDocument,
  DOCUMENT_FETCH_WINDOW_SECONDS,
  DOCUMENT_FETCHES_PER_WINDOW,
  DOCUMENT_TIMEOUT_MS,
  documentFetchWindow,
  documentLifetimeSeconds,
  isClientIdUrl,
  looksLikeClientIdUrl,
  MAX_DOCUMENT_BYTES,
} from '#domain/client-metadata';
import {
  checkRegistration,
  REGISTERED_CLIENT_SECONDS,
  REGISTRATION_WINDOW_SECONDS,
  REGISTRATIONS_PER_WINDOW,
  RegistrationError,
  registrationWindow,
} from '#domain/client-registration';
import { config } from '#shared/config';
import { HttpError } from '#shared/errors';

export { RegistrationError } from '#domain/client-registration';

import { guardedRequest } from '#vcs/network-guard';

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export type ClientLookup =
  | { readonly kind: 'found'; readonly app: StoredApp }
  | { readonly kind: 'unknown' }
  /** A metadata document URL that is not acceptable, or whose document is not: why, for the page. */
  | { readonly kind: 'invalid'; readonly message: string }
  /** This caller had the service fetch too many documents lately. */
  | { readonly kind: 'throttled'; readonly message: string };

/** Hosts whose client id URLs may be `http`: the loopback addresses the local stack may reach. */
const httpHosts = (): readonly string[] => config().originAllowedAddresses;

/** Fetches and checks a client metadata document; the client as stored, or why not. */
async function fetchDocumentClient(url: string): Promise<ClientLookup> {
  let response: Awaited<ReturnType<typeof guardedRequest>>;
  try {
    response = await guardedRequest(
      url,
      { allowedAddresses: config().originAllowedAddresses, connectTimeoutMs: DOCUMENT_TIMEOUT_MS },
      {
        method: 'GET',
        headers: { Accept: 'application/json' },
        timeoutMs: DOCUMENT_TIMEOUT_MS,
        maxBytes: MAX_DOCUMENT_BYTES,
        // The draft: the document is at its URL; a redirect elsewhere would name another client.
        followRedirects: false,
      },
    );
  } catch {
    return { kind: 'invalid', message: 'The client metadata document could not be fetched from its URL.' };
  }
  if (response.status !== 200)
    return {
      kind: 'invalid',
      message: `The client metadata document's URL answered HTTP ${response.status}, not 200.`,
    };
  if (response.truncated)
    return {
      kind: 'invalid',
      message: `The client metadata document is larger than ${MAX_DOCUMENT_BYTES} bytes.`,
    };
  let body: unknown;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return { kind: 'invalid', message: 'The client metadata document is not JSON.' };
  }
  const checked = checkClientDocument(url, body);
  if (!checked.ok) return { kind: 'invalid', message: checked.reason };
  const cacheControl = response.headers['cache-control'];
  const lifetime = documentLifetimeSeconds(
    Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl,
  );
  return { kind: 'found', app: await saveDocumentClient(checked.metadata, nowSeconds() + lifetime) };
}

/**
 * The client an authorize request names: a metadata document URL's client (its stored document
 * while fresh, else fetched again now), or an application item (a registered application, or a
 * dynamic client within its lifetime). `stored` is the item already read with the signed-in
 * user, when there was one (`undefined` also means it was not read).
 */
export async function authorizeClient(
  clientId: string,
  stored: StoredApp | null | undefined,
  address: string,
): Promise<ClientLookup> {
  if (looksLikeClientIdUrl(clientId)) {
    if (!isClientIdUrl(clientId, httpHosts()))
      return {
        kind: 'invalid',
        message:
          'The client_id is not a valid client metadata document URL (https, with a path, no query or fragment).',
      };
    const known = stored === undefined ? await getApp(clientId) : stored;
    if (known?.clientType === 'metadata-document' && (known.documentExpiresAt ?? 0) > nowSeconds())
      return { kind: 'found', app: known };
    const window = documentFetchWindow(Date.now());
    const counted = await countDocumentFetch(
      address,
      window,
      DOCUMENT_FETCHES_PER_WINDOW,
      (window + 2) * DOCUMENT_FETCH_WINDOW_SECONDS,
    );
    if (!counted)
      return {
        kind: 'throttled',
        message:
          'Too many client metadata documents were fetched for your address. Try again in a few minutes.',
      };
    return fetchDocumentClient(clientId);
  }
  const app = stored === undefined ? await getApp(clientId) : stored;
  if (!app || isLapsed(app, nowSeconds())) return { kind: 'unknown' };
  return { kind: 'found', app };
}

/** A lapsed dynamic client is as unknown to the token endpoint as to the authorize page. */
export const liveClient = (app: StoredApp | undefined): StoredApp | undefined =>
  app && !isLapsed(app, nowSeconds()) ? app : undefined;

/** What a registration answers (RFC 7591 §3.2.1). */
export interface RegisteredClient {
  readonly client_id: string;
  readonly client_id_issued_at: number;
  readonly client_name: string;
  readonly redirect_uris: readonly string[];
  readonly grant_types: readonly string[];
  readonly response_types: readonly string[];
  readonly token_endpoint_auth_method: 'none';
  readonly client_uri?: string;
  readonly scope?: string;
}

const DCR: ServiceSwitch = 'dynamic-client-registration';

export const dynamicRegistrationEnabled = (): Promise<boolean> => getServiceSwitch(DCR);
export const setDynamicRegistration = (on: boolean): Promise<void> => setServiceSwitch(DCR, on);

/** Turned off, the endpoint does not exist (404), as on a server that never offered it. */
const notOffered = () => new HttpError(404, 'Not Found');
const tooMany = () =>
  new HttpError(429, 'Too many client registrations from this address. Try again later.', {
    headers: { 'Retry-After': String(REGISTRATION_WINDOW_SECONDS) },
  });

/**
 * `POST /login/oauth/register`: registers a public client for `REGISTERED_CLIENT_SECONDS`, at most
 * `REGISTRATIONS_PER_WINDOW` per caller address per window; 404 while registration is off.
 */
export async function registerClient(body: unknown, address: string): Promise<RegisteredClient> {
  if (!(await dynamicRegistrationEnabled())) throw notOffered();
  const checked = checkRegistration(body);
  if (!checked.ok) throw new RegistrationError(checked.error, checked.description);
  const nowMs = Date.now();
  const window = registrationWindow(nowMs);
  const counted = await countRegistration(
    address,
    window,
    REGISTRATIONS_PER_WINDOW,
    (window + 2) * REGISTRATION_WINDOW_SECONDS,
  );
  if (!counted) throw tooMany();
  const issuedAt = Math.floor(nowMs / 1000);
  const { metadata } = checked;
  let saved: StoredApp | false = false;
  for (let attempt = 0; saved === false && attempt < 3; attempt++)
    saved = await saveDynamicClient(newClientId(), metadata, issuedAt + REGISTERED_CLIENT_SECONDS);
  if (saved === false) throw new Error('registerClient: no free client id');
  return {
    client_id: saved.clientId,
    client_id_issued_at: issuedAt,
    client_name: metadata.clientName,
    redirect_uris: metadata.redirectUris,
    grant_types: metadata.grantTypes,
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(metadata.clientUri ? { client_uri: metadata.clientUri } : {}),
    ...(metadata.scope ? { scope: metadata.scope } : {}),
  };
}
