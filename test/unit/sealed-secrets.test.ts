import { randomBytes } from 'node:crypto';
import { type DecryptCommand, EncryptCommand } from '@aws-sdk/client-kms';
import { describe, expect, it } from 'vitest';
import { isSealed, openWithKey, SealedSecretError, sealWithKey } from '#domain/sealed-secrets';
import { type KmsPort, kmsSealer, localKeySealer } from '#services/secret-sealer';

const seed = randomBytes(20);
const context = { purpose: 'totp', subject: 'kate' };

describe('local sealing (AES-256-GCM)', () => {
  const key = randomBytes(32);

  it('round-trips, with a fresh nonce each time, and never contains the plaintext', async () => {
    const sealer = localKeySealer(key);
    const one = await sealer.seal(seed, context);
    const two = await sealer.seal(seed, context);
    expect(one).not.toBe(two);
    expect(isSealed(one)).toBe(true);
    for (const spelling of [seed.toString('hex'), seed.toString('base64'), seed.toString('base64url')])
      expect(one).not.toContain(spelling);
    expect(await sealer.open(one, context)).toEqual(seed);
  });

  it('refuses another context, another key, a tampered value and plaintext', () => {
    const sealed = sealWithKey(key, seed, context);
    expect(() => openWithKey(key, sealed, { ...context, subject: 'mallory' })).toThrow(SealedSecretError);
    expect(() => openWithKey(randomBytes(32), sealed, context)).toThrow(SealedSecretError);
    const parts = sealed.split(':');
    parts[4] = Buffer.from('tampered').toString('base64url');
    expect(() => openWithKey(key, parts.join(':'), context)).toThrow(SealedSecretError);
    expect(() => openWithKey(key, 'JBSWY3DPEHPK3PXP', context)).toThrow(SealedSecretError);
    expect(() => sealWithKey(randomBytes(16), seed, context)).toThrow(SealedSecretError);
  });
});

describe('KMS sealing', () => {
  /** A stand-in KMS that records the requests and "encrypts" by tagging the plaintext with its context. */
  function fakeKms() {
    const requests: Array<EncryptCommand | DecryptCommand> = [];
    const kms: KmsPort = {
      async send(command) {
        requests.push(command);
        if (command instanceof EncryptCommand) {
          const { Plaintext, EncryptionContext } = command.input;
          return {
            CiphertextBlob: Buffer.from(
              JSON.stringify([EncryptionContext, Buffer.from(Plaintext ?? []).toString('hex')]),
            ),
          };
        }
        const [stored, hex] = JSON.parse(Buffer.from(command.input.CiphertextBlob ?? []).toString()) as [
          unknown,
          string,
        ];
        if (JSON.stringify(stored) !== JSON.stringify(command.input.EncryptionContext)) {
          throw Object.assign(new Error('bad context'), { name: 'InvalidCiphertextException' });
        }
        return { Plaintext: Buffer.from(hex, 'hex') };
      },
    };
    return { kms, requests };
  }

  it('encrypts with the key and the context, and decrypts with both', async () => {
    const { kms, requests } = fakeKms();
    const sealer = kmsSealer('arn:aws:kms:eu-west-1:111122223333:key/abc', kms);
    const sealed = await sealer.seal(seed, context);
    expect(sealed).toMatch(/^sealed:v1:kms:/);
    expect(await sealer.open(sealed, context)).toEqual(seed);
    expect(requests.map((request) => request.input)).toMatchObject([
      { KeyId: 'arn:aws:kms:eu-west-1:111122223333:key/abc', EncryptionContext: context },
      { KeyId: 'arn:aws:kms:eu-west-1:111122223333:key/abc', EncryptionContext: context },
    ]);
  });

  it('turns a context mismatch into SealedSecretError and refuses locally sealed values', async () => {
    const { kms } = fakeKms();
    const sealer = kmsSealer('key', kms);
    const sealed = await sealer.seal(seed, context);
    await expect(sealer.open(sealed, { ...context, subject: 'mallory' })).rejects.toThrow(SealedSecretError);
    await expect(sealer.open(sealWithKey(randomBytes(32), seed, context), context)).rejects.toThrow(
      SealedSecretError,
    );
  });
});
