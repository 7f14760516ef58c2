import { readFileSync } from 'node:fs';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import {
  openWithKey,
  SEALED_PREFIX,
  type SealContext,
  SealedSecretError,
  type SecretSealer,
  sealWithKey,
} from '#domain/sealed-secrets';
import { type Config, config, ENV } from '#shared/config';

/** What the KMS adapter needs of a KMS client (tests give a stand-in). */
export interface KmsPort {
  send(
    command: EncryptCommand | DecryptCommand,
  ): Promise<{ CiphertextBlob?: Uint8Array; Plaintext?: Uint8Array }>;
}

const KMS_PREFIX = `${SEALED_PREFIX}kms:`;

/**
 * KMS seals the secret itself (`Encrypt` takes up to 4 KiB: a seed or a credential fits), bound to
 * the context as its encryption context, so CloudTrail shows which secret was opened and a value
 * moved to another item does not decrypt. `sealed:v1:kms:<ciphertext blob>`.
 */
export function kmsSealer(keyId: string, kms: KmsPort): SecretSealer {
  const encryptionContext = (context: SealContext) => ({
    purpose: context.purpose,
    subject: context.subject,
  });
  return {
    async seal(plaintext, context) {
      const { CiphertextBlob } = await kms.send(
        new EncryptCommand({
          KeyId: keyId,
          Plaintext: plaintext,
          EncryptionContext: encryptionContext(context),
        }),
      );
      if (!CiphertextBlob) throw new SealedSecretError('KMS returned no ciphertext');
      return `${KMS_PREFIX}${Buffer.from(CiphertextBlob).toString('base64url')}`;
    },
    async open(sealed, context) {
      if (!sealed.startsWith(KMS_PREFIX)) throw new SealedSecretError('not a KMS-sealed value');
      const decrypt = new DecryptCommand({
        KeyId: keyId,
        CiphertextBlob: Buffer.from(sealed.slice(KMS_PREFIX.length), 'base64url'),
        EncryptionContext: encryptionContext(context),
      });
      // A wrong context or a damaged blob is InvalidCiphertextException: the value does not open.
      const { Plaintext } = await kms.send(decrypt).catch((error: unknown) => {
        if ((error as Error).name === 'InvalidCiphertextException')
          throw new SealedSecretError('the sealed value does not open with this key and context');
        throw error;
      });
      if (!Plaintext) throw new SealedSecretError('KMS returned no plaintext');
      return Buffer.from(Plaintext);
    },
  };
}

/** AES-256-GCM under a 32-byte key read from a file (the local stack creates `.data/secrets.key`). */
export function localKeySealer(key: Buffer): SecretSealer {
  return {
    seal: async (plaintext, context) => sealWithKey(key, plaintext, context),
    open: async (sealed, context) => openWithKey(key, sealed, context),
  };
}

/** The sealer the configuration names: KMS when a key id is set, else the local key file. */
export function sealerFor(settings: Pick<Config, 'secretsKmsKeyId' | 'secretsKeyFile'>): SecretSealer {
  if (settings.secretsKmsKeyId) return kmsSealer(settings.secretsKmsKeyId, new KMSClient({}));
  if (settings.secretsKeyFile) return localKeySealer(readFileSync(settings.secretsKeyFile));
  throw new Error(`${ENV.secretsKmsKeyId} or ${ENV.secretsKeyFile} must be set to store secrets`);
}

let cached: SecretSealer | undefined;
/** The process's sealer, built on first use (a function that never seals needs neither setting). */
export function secretSealer(): SecretSealer {
  cached ??= sealerFor(config());
  return cached;
}
