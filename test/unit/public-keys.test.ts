import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appDeployKeyIndexKey,
  appUserKeyIndexKey,
  deployKeyKey,
  sshKeyFingerprintKey,
  userKeyKey,
} from '#data/keys';
import { keyIdParam, keyTitle, mayManageDeployKeys, parsePublicKey } from '#domain/public-keys';
import { generateSshKey, sshBlob, sshLine, sshMpint, sshString, type TestKeyKind } from '#test/ssh-keys';

/** `ssh-keygen -lf` on a one-line public key file, when OpenSSH is installed. */
const sshKeygen = (() => {
  try {
    execFileSync('ssh-keygen', ['-?'], { stdio: 'ignore' });
  } catch (error) {
    // `-?` is an unknown option: ssh-keygen prints its usage and exits 1; ENOENT means it is absent.
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'ssh-keygen-'));
  return {
    fingerprint(line: string): string {
      const file = join(dir, 'key.pub');
      writeFileSync(file, `${line}\n`);
      return execFileSync('ssh-keygen', ['-lf', file], { encoding: 'utf8' }).split(' ')[1] ?? '';
    },
    generate(type: string, bits?: number): string {
      const file = join(dir, `${type}-${bits ?? 0}-${Math.random()}`);
      execFileSync('ssh-keygen', [
        '-q',
        '-t',
        type,
        ...(bits ? ['-b', String(bits)] : []),
        '-N',
        '',
        '-C',
        'me@laptop',
        '-f',
        file,
      ]);
      return readFileSync(`${file}.pub`, 'utf8');
    },
  };
})();

const sha256Fingerprint = (blob: Buffer) =>
  `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;

/** The line's type with another blob. */
const replaceBlob = (line: string, blob: Buffer) => `${line.split(' ')[0]} ${blob.toString('base64')}`;

describe('parsePublicKey', () => {
  it.each<[TestKeyKind, string]>([
    ['ed25519', 'ssh-ed25519'],
    ['rsa', 'ssh-rsa'],
    ['ecdsa-p256', 'ecdsa-sha2-nistp256'],
    ['ecdsa-p384', 'ecdsa-sha2-nistp384'],
    ['ecdsa-p521', 'ecdsa-sha2-nistp521'],
  ])('accepts a real %s key and fingerprints it as ssh-keygen does', (kind, type) => {
    const { blob, line } = generateSshKey(kind);
    const parsed = parsePublicKey(`${line} octocat@example.com`);
    expect(parsed).toEqual({
      valid: true,
      type,
      key: line,
      fingerprint: sshKeygen ? sshKeygen.fingerprint(line) : sha256Fingerprint(blob),
      comment: 'octocat@example.com',
    });
    expect(parsed.valid && parsed.fingerprint).toBe(sha256Fingerprint(blob));
  });

  it.skipIf(!sshKeygen).each([
    ['ed25519', undefined],
    ['rsa', 3072],
    ['ecdsa', 256],
    ['ecdsa', 521],
  ])('accepts a key that ssh-keygen generated (%s %s)', (type, bits) => {
    const line = sshKeygen?.generate(type, bits) ?? '';
    const parsed = parsePublicKey(line);
    expect(parsed.valid).toBe(true);
    if (!parsed.valid) return;
    expect(parsed.key).toBe(line.trim().split(' ').slice(0, 2).join(' '));
    expect(parsed.comment).toBe('me@laptop');
    expect(parsed.fingerprint).toBe(sshKeygen?.fingerprint(line));
  });

  it('stores the key without its comment and tolerates extra whitespace', () => {
    const { line } = generateSshKey('ed25519');
    const [type, base64] = line.split(' ');
    const parsed = parsePublicKey(`  ${type}\t${base64}   my  laptop \n`);
    expect(parsed).toMatchObject({ valid: true, key: line, comment: 'my laptop' });
    expect(parsePublicKey(line)).toMatchObject({ valid: true, comment: '' });
  });

  it('accepts RSA keys of 1024 bits and refuses shorter ones (GitHub requires 1024)', () => {
    expect(parsePublicKey(generateSshKey('rsa', 1024).line).valid).toBe(true);
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const jwk = publicKey.export({ format: 'jwk' });
    // The same modulus with its top byte dropped: 1016 bits.
    const short = Buffer.from(jwk.n ?? '', 'base64url').subarray(1);
    short[0] = (short[0] ?? 0) | 0x80;
    const blob = Buffer.concat([
      sshString('ssh-rsa'),
      sshMpint(Buffer.from(jwk.e ?? '', 'base64url')),
      sshMpint(short),
    ]);
    expect(parsePublicKey(sshLine(blob))).toEqual({
      valid: false,
      reason: 'RSA keys must be at least 1024 bits',
    });
  });

  it.each<[string, string, () => string]>([
    ['an empty string', 'unsupported key type', () => ''],
    [
      'an unsupported type (DSA)',
      'unsupported key type',
      () => `ssh-dss ${generateSshKey('ed25519').line.split(' ')[1]}`,
    ],
    ['a type without key data', 'not base64', () => 'ssh-ed25519'],
    ['data that is not base64', 'not base64', () => 'ssh-ed25519 AAAA$$$$'],
    [
      'base64 with stray bits (not canonical)',
      'not base64',
      () => {
        // A 104-byte nistp256 blob ends in one '='; the last data character's low bits are unused,
        // so flipping one changes the text but not the decoded bytes.
        const { line } = generateSshKey('ecdsa-p256');
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
        const altered = alphabet[alphabet.indexOf(line.at(-2) ?? 'A') ^ 1] ?? 'B';
        return `${line.slice(0, -2)}${altered}=`;
      },
    ],
    [
      'an ed25519 blob declared as ssh-rsa',
      'the key data is of another type',
      () => `ssh-rsa ${generateSshKey('ed25519').line.split(' ')[1]}`,
    ],
    [
      'an ed25519 key of 31 bytes',
      'an ed25519 key is 32 bytes',
      () => sshLine(Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.alloc(31, 7))])),
    ],
    [
      'trailing bytes after the key',
      'trailing bytes after the key',
      () => {
        const { blob, line } = generateSshKey('ed25519');
        return replaceBlob(line, Buffer.concat([blob, sshString('extra')]));
      },
    ],
    [
      'a truncated blob',
      'truncated RSA key',
      () => {
        const { blob, line } = generateSshKey('rsa', 1024);
        return replaceBlob(line, blob.subarray(0, blob.length - 10));
      },
    ],
    [
      'an ECDSA key whose curve name does not match its type',
      'curve name does not match the key type',
      () => {
        const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'jwk' });
        const blob = sshBlob(p384);
        // Rewrite the type to nistp256 and keep the nistp384 curve name and point.
        const rest = blob.subarray(4 + blob.readUInt32BE(0));
        return sshLine(Buffer.concat([sshString('ecdsa-sha2-nistp256'), rest]));
      },
    ],
    [
      'an ECDSA point that is not on the curve',
      'the ECDSA point is not on the curve',
      () => {
        const { blob } = generateSshKey('ecdsa-p256');
        const bent = Buffer.from(blob);
        bent[bent.length - 1] = (bent[bent.length - 1] ?? 0) ^ 1;
        return sshLine(bent);
      },
    ],
  ])('refuses %s (%s)', (_what, reason, make) => {
    expect(parsePublicKey(make())).toEqual({ valid: false, reason });
  });
});

describe('parsePublicKey: usable RSA keys only', () => {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const modulus = Buffer.from(publicKey.export({ format: 'jwk' }).n ?? '', 'base64url');
  const rsaLine = (exponent: Buffer, n = modulus) =>
    sshLine(Buffer.concat([sshString('ssh-rsa'), sshMpint(exponent), sshMpint(n)]));
  const number = (value: bigint) =>
    Buffer.from(
      value
        .toString(16)
        .padStart(2, '0')
        .replace(/^(.(..)*)$/, '0$1'),
      'hex',
    );

  it('accepts odd exponents from 3 up to just below the modulus', () => {
    expect(parsePublicKey(rsaLine(number(3n))).valid).toBe(true);
    expect(parsePublicKey(rsaLine(number(65537n))).valid).toBe(true);
    const n = BigInt(`0x${modulus.toString('hex')}`);
    expect(parsePublicKey(rsaLine(number(n - 2n))).valid).toBe(true);
  });

  it.each<[string, string, () => string]>([
    ['an exponent of 1', 'RSA exponent too small', () => rsaLine(number(1n))],
    ['an exponent of 0', 'RSA exponent too small', () => rsaLine(Buffer.alloc(0))],
    ['an even exponent', 'RSA exponent is even', () => rsaLine(number(65536n))],
    ['an exponent equal to the modulus', 'RSA exponent larger than the modulus', () => rsaLine(modulus)],
    [
      'an exponent longer than the modulus (300 KB would have been stored)',
      'RSA exponent larger than the modulus',
      () => rsaLine(Buffer.concat([Buffer.of(0x7f), Buffer.alloc(200, 0xff)])),
    ],
    [
      'an even modulus',
      'RSA modulus is even',
      () => {
        const even = Buffer.from(modulus);
        even[even.length - 1] = (even[even.length - 1] ?? 0) & 0xfe;
        return rsaLine(number(65537n), even);
      },
    ],
    [
      'a modulus over 16384 bits',
      'RSA keys must be at most 16384 bits',
      () => rsaLine(number(65537n), Buffer.concat([Buffer.of(0x7f), Buffer.alloc(2048, 0xff)])),
    ],
    [
      'key data over 8 KiB of base64',
      'key data too long',
      () => rsaLine(Buffer.concat([Buffer.of(0x7f), Buffer.alloc(10 * 1024, 0xff)])),
    ],
    [
      'a line over 16 KiB',
      'key line too long',
      () => `${generateSshKey('ed25519').line} ${'c'.repeat(16384)}`,
    ],
  ])('refuses %s (%s)', (_what, reason, make) => {
    expect(parsePublicKey(make())).toEqual({ valid: false, reason });
  });

  it('keeps a long comment within the line bound, cut to the title length', () => {
    const parsed = parsePublicKey(`${generateSshKey('ed25519').line} ${'c'.repeat(1000)}`);
    expect(parsed.valid && keyTitle(undefined, parsed.comment).length).toBe(255);
  });
});

describe('key titles and ids', () => {
  it('default the title to the comment, cut to 255 characters', () => {
    expect(keyTitle('Work laptop', 'me@host')).toBe('Work laptop');
    expect(keyTitle('', 'me@host')).toBe('');
    expect(keyTitle(undefined, 'me@host')).toBe('me@host');
    expect(keyTitle(undefined, 'x'.repeat(300))).toHaveLength(255);
  });

  it('read key ids from the path as positive integers only', () => {
    expect(keyIdParam('42')).toBe(42);
    for (const bad of [undefined, '', '0', '-1', '1.5', '01', 'abc', '1e3', '9'.repeat(16)])
      expect(keyIdParam(bad)).toBeUndefined();
  });

  it('let only the repository owner manage deploy keys, case-insensitively', () => {
    expect(mayManageDeployKeys({ ownerLogin: 'Octocat' }, 'octocat')).toBe(true);
    expect(mayManageDeployKeys({ ownerLogin: 'octocat' }, 'hubot')).toBe(false);
  });
});

describe('public key item keys', () => {
  it('put user keys in the user partition and deploy keys in the repository partition', () => {
    expect(userKeyKey('OctoCat', 7)).toEqual({ PK: 'USER#octocat', SK: 'KEY#000000000007' });
    expect(deployKeyKey('OctoCat', 'Hello-World', 8)).toEqual({
      PK: 'REPO#octocat/hello-world',
      SK: 'DEPLOYKEY#000000000008',
    });
  });

  it('index app-created keys by user and client_id, and fingerprints service-wide', () => {
    expect(appUserKeyIndexKey('OctoCat', 'Iv1abc', 7)).toEqual({
      GSI1PK: 'APPKEYS#octocat#Iv1abc',
      GSI1SK: 'KEY#000000000007',
    });
    expect(appDeployKeyIndexKey('OctoCat', 'Iv1abc', 8)).toEqual({
      GSI1PK: 'APPKEYS#octocat#Iv1abc',
      GSI1SK: 'DEPLOYKEY#000000000008',
    });
    expect(sshKeyFingerprintKey('SHA256:abc/+d')).toEqual({ PK: 'SSHKEY#SHA256:abc/+d', SK: 'SSHKEY' });
  });
});
