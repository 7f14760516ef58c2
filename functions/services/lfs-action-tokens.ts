/**
 * The key behind LFS action tokens (`domain/lfs-action-tokens.ts`), which only the local object
 * store's actions carry: where objects live in S3 the actions are presigned URLs, signed with the
 * role's credentials, and need no key of ours (docs/decisions.md, "LFS actions carry their own
 * short-lived credential").
 *
 * The key is derived (HKDF-SHA256) from the local secrets key, the one key the local stack and the
 * as-deployed tests already hold (`SECRETS_KEY_FILE`), under a label of its own, so no MAC is ever
 * made with the key that seals secrets.
 */
import { hkdfSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type LfsActionGrant, lfsActionToken, lfsActionTokenValid } from '#domain/lfs-action-tokens';
import { type Config, config, ENV } from '#shared/config';

const HKDF_INFO = 'lfs-action-token-v1';

/** The MAC key for a configuration; throws when there is no local secrets key to derive it from. */
export function lfsActionKey(settings: Pick<Config, 'secretsKeyFile'>): Buffer {
  if (!settings.secretsKeyFile)
    throw new Error(`${ENV.secretsKeyFile} must be set where LFS objects are kept without ${ENV.lfsBucket}`);
  const secret = readFileSync(settings.secretsKeyFile);
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), HKDF_INFO, 32));
}

let cached: Buffer | undefined;
const key = (): Buffer => {
  cached ??= lfsActionKey(config());
  return cached;
};

/** A token for `grant` until `expiresAtMs`: what an action's `Authorization: RemoteAuth` carries. */
export const issueLfsActionToken = (grant: LfsActionGrant, expiresAtMs: number): string =>
  lfsActionToken(key(), grant, expiresAtMs);

/** Whether a presented token grants exactly `grant` now. */
export const lfsActionTokenAccepted = (token: string, grant: LfsActionGrant): boolean =>
  lfsActionTokenValid(key(), token, grant, Date.now());
