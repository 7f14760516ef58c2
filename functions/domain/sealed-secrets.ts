import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets the service must read back (TOTP seeds; later, import credentials) are stored sealed:
 * encrypted with authentication, bound to what they belong to. One port, two adapters
 * (`shared/secret-sealer.ts`): KMS in AWS, a local key file on a developer's machine.
 */
export interface SealContext {
  /** What the secret is for, e.g. `totp`. */
  readonly purpose: string;
  /** Whose it is, e.g. the folded login: a sealed value copied to another item does not open. */
  readonly subject: string;
}

export interface SecretSealer {
  seal(plaintext: Uint8Array, context: SealContext): Promise<string>;
  /** Throws `SealedSecretError` when the value is not sealed, was tampered with, or has another context. */
  open(sealed: string, context: SealContext): Promise<Buffer>;
}

export class SealedSecretError extends Error {
  override readonly name = 'SealedSecretError';
}

/** Every sealed value starts so: `sealed:v1:<scheme>:…`. Anything else is a legacy plaintext value. */
export const SEALED_PREFIX = 'sealed:v1:';
export const isSealed = (value: string): boolean => value.startsWith(SEALED_PREFIX);

/** The additional authenticated data (or KMS encryption context) for a context. */
export const contextString = (context: SealContext): string => `${context.purpose}\n${context.subject}`;

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

/** AES-256-GCM with a random 96-bit nonce: `sealed:v1:local:<nonce>:<ciphertext>:<tag>`. */
export function sealWithKey(key: Buffer, plaintext: Uint8Array, context: SealContext): string {
  if (key.length !== 32) throw new SealedSecretError('the sealing key must be 32 bytes');
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(contextString(context)));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${SEALED_PREFIX}local:${b64(nonce)}:${b64(ciphertext)}:${b64(cipher.getAuthTag())}`;
}

export function openWithKey(key: Buffer, sealed: string, context: SealContext): Buffer {
  const [nonce, ciphertext, tag, extra] = sealed.startsWith(`${SEALED_PREFIX}local:`)
    ? sealed.slice(`${SEALED_PREFIX}local:`.length).split(':')
    : [];
  if (nonce === undefined || ciphertext === undefined || tag === undefined || extra !== undefined)
    throw new SealedSecretError('not a locally sealed value');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(contextString(context)));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  } catch {
    throw new SealedSecretError('the sealed value does not open with this key and context');
  }
}
