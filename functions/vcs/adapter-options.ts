/**
 * What every origin adapter takes besides its own chunk plan: test hooks for the network (a stub
 * resolver and a recording dialer) and the import's limits, with what they default to.
 */
import { DEFAULT_IMPORT_MAX_BYTES, DEFAULT_IMPORT_MAX_OBJECTS } from '#shared/config';
import type { Guard } from './network-guard.ts';
import type { OriginAccess } from './origin.ts';

export interface AdapterOptions {
  /** Test hooks: a stub resolver and a dialer (defaults: the system's). */
  readonly resolve?: Guard['resolve'];
  readonly dial?: Guard['dial'];
  /** Largest copy on disk: a mirror, a local repository, `raw.git` (config `IMPORT_MAX_BYTES`). */
  readonly maxBytes?: number;
  /** Most Git objects in `raw.git` (config `IMPORT_MAX_OBJECTS`). */
  readonly maxObjects?: number;
  /** How long an origin may send nothing before the import fails (default `DEFAULT_IDLE_TIMEOUT_MS`). */
  readonly idleTimeoutMs?: number;
  /** The whole of an origin check's bound (fingerprints only; default one minute). */
  readonly checkTimeoutMs?: number;
}

/**
 * Every origin protocol's inactivity deadline: an origin that sends nothing this long fails the
 * import readably ("sent nothing for 60 seconds"), without retries. A live server keeps talking
 * (git's upload-pack sends keep-alives every 5 s while it prepares a pack).
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

export interface AdapterSetup {
  readonly maxBytes: number;
  readonly maxObjects: number;
  readonly idleTimeoutMs: number;
  /** The network guard of one detection or import: its allowed addresses, with the options' hooks. */
  guardFor(access: Pick<OriginAccess, 'allowedAddresses'>): Guard;
}

export function adapterSetup(options: AdapterOptions): AdapterSetup {
  return {
    maxBytes: options.maxBytes ?? DEFAULT_IMPORT_MAX_BYTES,
    maxObjects: options.maxObjects ?? DEFAULT_IMPORT_MAX_OBJECTS,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    guardFor: (access) => ({
      allowedAddresses: access.allowedAddresses,
      resolve: options.resolve,
      dial: options.dial,
    }),
  };
}
