import { readFileSync } from 'node:fs';
import { openWithKey, type SecretSealer, sealWithKey } from '#domain/sealed-secrets';
import { type Config, config, ENV } from '#shared/config';

/** AES-256-GCM under a 32-byte key read from a file (the local stack creates `.data/secrets.key`). */
export function localKeySealer(key: Buffer): SecretSealer {
  return {
    seal: async (plaintext, context) => sealWithKey(key, plaintext, context),
    open: async (sealed, context) => openWithKey(key, sealed, context),
  };
}

/**
 * A KMS sealer whose client is loaded on first use: only sign-in with a one-time code and import
 * credentials open or seal secrets, and every other function's cold start would pay for the KMS
 * client's module (docs/decisions.md, "Issue 19").
 */
function lazyKmsSealer(keyId: string): SecretSealer {
  let sealer: Promise<SecretSealer> | undefined;
  const load = () => {
    sealer ??= Promise.all([import('@aws-sdk/client-kms'), import('./kms-sealer.ts')]).then(
      ([{ KMSClient }, { kmsSealer }]) => kmsSealer(keyId, new KMSClient({})),
    );
    return sealer;
  };
  return {
    seal: async (plaintext, context) => (await load()).seal(plaintext, context),
    open: async (sealed, context) => (await load()).open(sealed, context),
  };
}

/** The sealer the configuration names: KMS when a key id is set, else the local key file. */
export function sealerFor(settings: Pick<Config, 'secretsKmsKeyId' | 'secretsKeyFile'>): SecretSealer {
  if (settings.secretsKmsKeyId) return lazyKmsSealer(settings.secretsKmsKeyId);
  if (settings.secretsKeyFile) return localKeySealer(readFileSync(settings.secretsKeyFile));
  throw new Error(`${ENV.secretsKmsKeyId} or ${ENV.secretsKeyFile} must be set to store secrets`);
}

let cached: SecretSealer | undefined;
/** The process's sealer, built on first use (a function that never seals needs neither setting). */
export function secretSealer(): SecretSealer {
  cached ??= sealerFor(config());
  return cached;
}
