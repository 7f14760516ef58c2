/**
 * The device authorization grant (RFC 8628) as GitHub runs it: the device asks for codes, the user
 * enters the user code on the device page and approves or cancels, and the device polls the token
 * endpoint until it gets a token (an authorization of the application like any web-flow token).
 * The device endpoint, the two device pages and the token endpoint's device branch call one
 * function here each.
 */

import { getApp, type StoredApp } from '#data/apps';
import { deleteAuthorization, getGrantGeneration } from '#data/authorizations';
import {
  claimDevice,
  decideDevice,
  deviceByUserCode,
  getDevice,
  putDevice,
  recordDeviceExchange,
  releaseDevice,
  releaseEntry,
  reserveEntry,
  type StoredDevice,
  slowDown,
} from '#data/device-codes';
import { isPlausibleClientId, parseScopeParameter } from '#domain/authorize-request';
import {
  canonicalUserCode,
  DEVICE_CODE_FORMAT,
  DEVICE_CODE_GRANT,
  entryWindow,
  entryWindowEnd,
  entryWindowExpiry,
  hashDeviceSecret,
  MAX_WRONG_ENTRIES,
  newDeviceCode,
  newUserCode,
  PollMemory,
  SLOW_DOWN_STEP_SECONDS,
} from '#domain/device-codes';
import { OAuthError } from '#domain/oauth-errors';
import { checkResources, type ResourceUrls } from '#domain/resources';
import type { Scope } from '#domain/scopes';
import { recordSecurityEvent } from './security-log.ts';
import { type IssuedToken, issuedToken, newUserToken, storeUserToken } from './user-tokens.ts';

/**
 * The application a device request names, checked as GitHub checks it: unknown →
 * `incorrect_client_credentials`, suspended → `application_suspended`, device flow off →
 * `device_flow_disabled`. No client secret: device clients are public clients.
 */
async function deviceApp(clientId: string | undefined): Promise<StoredApp> {
  const app = clientId && isPlausibleClientId(clientId) ? await getApp(clientId) : undefined;
  if (!app) throw new OAuthError('incorrect_client_credentials');
  if (app.suspended) throw new OAuthError('application_suspended');
  if (!app.deviceFlowEnabled) throw new OAuthError('device_flow_disabled');
  return app;
}

export interface DeviceCodes {
  readonly deviceCode: string;
  readonly userCode: string;
  readonly expiresIn: number;
  readonly interval: number;
}

/**
 * Device codes whose last poll a process remembers: at a 5 s interval, 10,000 codes is 2,000
 * polls a second per instance (far beyond one Lambda instance), in about a megabyte.
 */
const RECENT_POLLS_KEPT = 10_000;

/** Tries before giving up on an unused user code (20^8 codes: a second try is already rare). */
const USER_CODE_TRIES = 5;

/** POST /login/device/code: a device code and a user code for the application and the requested scopes. */
export async function requestDeviceCodes(
  clientId: string | undefined,
  scope: string | undefined,
  timing: { readonly ttlSeconds: number; readonly intervalSeconds: number },
  requested: { readonly resources: readonly string[]; readonly urls: ResourceUrls },
): Promise<DeviceCodes> {
  const { ttlSeconds, intervalSeconds } = timing;
  const app = await deviceApp(clientId);
  const scopes = parseScopeParameter(scope);
  // RFC 8707 in the device authorization request: the token's resource, as in the code flow.
  const resource = checkResources(requested.resources, requested.urls);
  if (!resource.ok) throw new OAuthError('invalid_target', 400, resource.reason);
  for (let attempt = 0; attempt < USER_CODE_TRIES; attempt += 1) {
    const deviceCode = newDeviceCode();
    const userCode = newUserCode();
    const stored = await putDevice({
      deviceCodeHash: hashDeviceSecret(deviceCode),
      userCodeHash: hashDeviceSecret(userCode),
      clientId: app.clientId,
      scopes,
      expiresAt: Math.floor(Date.now() / 1000) + ttlSeconds,
      intervalMs: Math.round(intervalSeconds * 1000),
      resource: resource.resource,
    });
    if (stored) return { deviceCode, userCode, expiresIn: ttlSeconds, interval: intervalSeconds };
  }
  throw new Error('requestDeviceCodes: no unused user code found');
}

export interface DevicePoll {
  readonly grantType: string | undefined;
  readonly clientId: string | undefined;
  readonly deviceCode: string | undefined;
}

/** A device code this client cannot use: the client is checked first (its error wins). */
async function incorrectDeviceCode(clientId: string | undefined): Promise<never> {
  await deviceApp(clientId);
  throw new OAuthError('incorrect_device_code');
}

/**
 * When this process last saw each device code polled. A Lambda instance serves one request at a
 * time and keeps its memory between requests, so a client polling one instance too fast is told
 * `slow_down` exactly; polls spread over several instances are each judged by the instance that
 * takes them (docs/decisions.md, "Device flow").
 */
const recentPolls = new PollMemory(RECENT_POLLS_KEPT);

/**
 * POST /login/oauth/access_token with the device grant: one strongly consistent GetItem. The
 * application is read only when an answer depends on it (a token is about to be issued, or the
 * device code is not this client's). A poll sooner than the interval after the code's last poll
 * is `slow_down`, and the interval grows by 5 seconds (stored, answered as `interval`). A device
 * code gives exactly one token (a conditional claim); presented again it is
 * `incorrect_device_code`, as is a code of another client.
 */
export async function pollDeviceToken(input: DevicePoll): Promise<IssuedToken> {
  if (input.grantType !== DEVICE_CODE_GRANT) throw new OAuthError('unsupported_grant_type');
  const { clientId, deviceCode } = input;
  if (!clientId || !isPlausibleClientId(clientId)) throw new OAuthError('incorrect_client_credentials');
  if (!deviceCode || !DEVICE_CODE_FORMAT.test(deviceCode)) return incorrectDeviceCode(clientId);
  const deviceCodeHash = hashDeviceSecret(deviceCode);
  const device = await getDevice(deviceCodeHash);
  if (!device || device.clientId !== clientId) return incorrectDeviceCode(clientId);
  if (device.exchangedAt !== null) throw new OAuthError('incorrect_device_code');
  const nowMs = Date.now();
  if (device.expiresAt <= Math.floor(nowMs / 1000)) throw new OAuthError('expired_token');
  if (recentPolls.tooSoon(deviceCodeHash, nowMs, device.intervalMs)) {
    const intervalMs = await slowDown(device, SLOW_DOWN_STEP_SECONDS * 1000);
    throw new OAuthError('slow_down', 200, undefined, { interval: Math.ceil(intervalMs / 1000) });
  }
  if (device.status === 'pending') throw new OAuthError('authorization_pending');
  if (device.status === 'denied') throw new OAuthError('access_denied');
  return issueDeviceToken(await deviceApp(clientId), device);
}

/**
 * Mints the token the way every grant does (`user-tokens`: an expiring token and a refresh token
 * when the app wants them), claims the device code with its hash, then stores it.
 */
async function issueDeviceToken(app: StoredApp, device: StoredDevice): Promise<IssuedToken> {
  const login = device.login;
  if (login === null) throw new Error('issueDeviceToken: an approved device authorization has no user');
  const pending = newUserToken(app, { publicClient: true });
  if (!(await claimDevice(device.deviceCodeHash, pending.tokenHash)))
    throw new OAuthError('incorrect_device_code');
  let created: Awaited<ReturnType<typeof storeUserToken>>;
  try {
    created = await storeUserToken(pending, {
      login,
      clientId: app.clientId,
      scopes: device.scopes,
      grantGeneration: device.grantGeneration,
      resource: device.resource,
    });
  } catch (error) {
    // Nothing was issued: give the claim back so that the next poll tries again.
    await releaseDevice(device.deviceCodeHash, pending.tokenHash);
    throw error;
  }
  // The user revoked the application after approving: the approval died with the grant.
  if (created.kind === 'grant-revoked') throw new OAuthError('access_denied');
  if (created.kind !== 'created') {
    throw new Error('issueDeviceToken: an application token has no note or fingerprint to clash');
  }
  await recordDeviceExchange(device.deviceCodeHash, created.authorization.id).catch(
    async (error: unknown) => {
      await deleteAuthorization(login, created.authorization.id);
      throw error;
    },
  );
  return issuedToken(pending, device.scopes);
}

/** What the device page found for a typed user code. */
export type DeviceEntry =
  | {
      readonly kind: 'found';
      readonly userCode: string;
      readonly app: StoredApp;
      readonly scopes: readonly Scope[];
      readonly deviceCodeHash: string;
    }
  /** Not a user code at all (wrong length or letters): not looked up, not counted. */
  | { readonly kind: 'malformed' }
  /** No pending device authorization has this code (counted against the user's entries). */
  | { readonly kind: 'wrong'; readonly remaining: number }
  /** Too many wrong entries: entry is locked until `until` (epoch seconds). */
  | { readonly kind: 'locked'; readonly until: number };

/**
 * A user code typed on the device page. User codes are short enough to guess, so each well-formed
 * entry first reserves one of the user's `MAX_WRONG_ENTRIES` per window (a conditional counter, so
 * parallel guesses cannot exceed it) and a right code gives its reservation back.
 */
export async function enterUserCode(login: string, typed: string): Promise<DeviceEntry> {
  const userCode = canonicalUserCode(typed);
  if (!userCode) return { kind: 'malformed' };
  const nowMs = Date.now();
  const window = entryWindow(nowMs);
  const entries = await reserveEntry(login, window, MAX_WRONG_ENTRIES, entryWindowExpiry(window));
  if (entries === false) return { kind: 'locked', until: entryWindowEnd(window) };
  const device = await deviceByUserCode(hashDeviceSecret(userCode));
  const usable = device && device.status === 'pending' && device.expiresAt > Math.floor(nowMs / 1000);
  const app = usable ? await getApp(device.clientId) : undefined;
  if (!device || !app || app.suspended || !app.deviceFlowEnabled) {
    return entries >= MAX_WRONG_ENTRIES
      ? { kind: 'locked', until: entryWindowEnd(window) }
      : { kind: 'wrong', remaining: MAX_WRONG_ENTRIES - entries };
  }
  await releaseEntry(login, window);
  return { kind: 'found', userCode, app, scopes: device.scopes, deviceCodeHash: device.deviceCodeHash };
}

export type DeviceDecision = 'approved' | 'denied';

/**
 * The user's Authorize or Cancel for the code on the confirmation page. The code is entered again
 * (from the form's hidden field) with the same limit. `done` is false when the code stopped being
 * pending in between (another tab decided, or it expired).
 */
export async function decideUserCode(
  login: string,
  typed: string,
  decision: DeviceDecision,
): Promise<{ readonly entry: DeviceEntry; readonly done: boolean }> {
  const entry = await enterUserCode(login, typed);
  if (entry.kind !== 'found') return { entry, done: false };
  const nowMs = Date.now();
  const done =
    decision === 'approved'
      ? await decideDevice(
          entry.deviceCodeHash,
          {
            status: 'approved',
            login,
            // Read before the approval is stored: a revocation in between leaves it already dead.
            grantGeneration: await getGrantGeneration(login, entry.app.clientId),
          },
          nowMs,
        )
      : await decideDevice(entry.deviceCodeHash, { status: 'denied', login }, nowMs);
  // An approval authorizes the application (its one conditional update: recorded after it, once).
  if (done && decision === 'approved')
    await recordSecurityEvent({
      kind: 'appAuthorized',
      login,
      identity: [entry.deviceCodeHash],
      subject: {
        application: { clientId: entry.app.clientId, name: entry.app.name },
        detail: 'device',
      },
    });
  return { entry, done };
}
