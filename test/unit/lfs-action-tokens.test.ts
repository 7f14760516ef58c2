import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type LfsActionGrant, lfsActionToken, lfsActionTokenValid } from '#domain/lfs-action-tokens';
import { lfsActionKey } from '#services/lfs-action-tokens';
import { readConfig } from '#shared/config';

const key = randomBytes(32);
const grant: LfsActionGrant = { operation: 'download', repositoryId: 7, oid: 'a'.repeat(64) };
const NOW = 1_750_000_000_000;
const EXPIRES = NOW + 3_600_000;

describe('lfsActionTokenValid', () => {
  const token = lfsActionToken(key, grant, EXPIRES);

  it('accepts the token for its grant until its expiry, not at or after it', () => {
    expect(lfsActionTokenValid(key, token, grant, NOW)).toBe(true);
    expect(lfsActionTokenValid(key, token, grant, EXPIRES - 1)).toBe(true);
    expect(lfsActionTokenValid(key, token, grant, EXPIRES)).toBe(false);
  });

  it('refuses it for another operation, repository or object, and under another key', () => {
    expect(lfsActionTokenValid(key, token, { ...grant, operation: 'upload' }, NOW)).toBe(false);
    expect(lfsActionTokenValid(key, token, { ...grant, repositoryId: 8 }, NOW)).toBe(false);
    expect(lfsActionTokenValid(key, token, { ...grant, oid: 'b'.repeat(64) }, NOW)).toBe(false);
    expect(lfsActionTokenValid(randomBytes(32), token, grant, NOW)).toBe(false);
  });

  it('refuses every other spelling: a moved expiry, another MAC character, padding, a leading zero', () => {
    const [expiry = '', mac = ''] = token.split('.');
    const last = mac.at(-1) ?? '';
    // base64url's last character carries 2 unused bits: its neighbours decode to the same bytes.
    const sameBytes = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].filter(
      (c) =>
        c !== last && Buffer.from(mac.slice(0, -1) + c, 'base64url').equals(Buffer.from(mac, 'base64url')),
    );
    expect(sameBytes).toHaveLength(3);
    for (const spelling of [
      `${Number(expiry) + 1}.${mac}`,
      `0${expiry}.${mac}`,
      `${expiry}.${mac}=`,
      ...sameBytes.map((c) => `${expiry}.${mac.slice(0, -1)}${c}`),
      `${expiry}.${mac.slice(1)}`,
      `${expiry}.${mac}`.toUpperCase(),
      '',
      `${expiry}.`,
    ])
      expect(lfsActionTokenValid(key, spelling, grant, NOW), spelling).toBe(false);
  });
});

describe('lfsActionKey', () => {
  it('derives a key of its own from the secrets key file, and needs that file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lfs-key-'));
    const file = join(dir, 'secrets.key');
    const secret = randomBytes(32);
    await writeFile(file, secret);

    const derived = lfsActionKey({ secretsKeyFile: file });

    expect(derived).toHaveLength(32);
    expect(derived.equals(secret)).toBe(false);
    expect(lfsActionKey({ secretsKeyFile: file }).equals(derived)).toBe(true);
    expect(() => lfsActionKey({ secretsKeyFile: undefined })).toThrow(/SECRETS_KEY_FILE/);
  });
});

describe('LFS_ACTION_SECONDS', () => {
  it('defaults to GitHub’s hour and is bounded by the longest presigned URL', () => {
    expect(readConfig({ TABLE_NAME: 't' }).lfsActionSeconds).toBe(3600);
    expect(readConfig({ TABLE_NAME: 't', LFS_ACTION_SECONDS: '5' }).lfsActionSeconds).toBe(5);
    for (const bad of ['0', '-1', '1.5', '604801'])
      expect(() => readConfig({ TABLE_NAME: 't', LFS_ACTION_SECONDS: bad })).toThrow(/LFS_ACTION_SECONDS/);
  });
});
