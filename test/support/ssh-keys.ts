import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';

/**
 * Real public keys for tests, in OpenSSH's one-line format. node:crypto generates the key pair;
 * the SSH wire blob (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709 §4) is built here from its JWK.
 */
export type TestKeyKind = 'ed25519' | 'rsa' | 'ecdsa-p256' | 'ecdsa-p384' | 'ecdsa-p521';

/** An SSH `string`: uint32 big-endian length, then the bytes. */
export function sshString(data: Buffer | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** An SSH `mpint` of a non-negative big-endian number: a zero byte first when the top bit is set. */
export function sshMpint(unsigned: Buffer): Buffer {
  let start = 0;
  while (start < unsigned.length - 1 && unsigned[start] === 0) start++;
  const trimmed = unsigned.subarray(start);
  return sshString(((trimmed[0] ?? 0) & 0x80) !== 0 ? Buffer.concat([Buffer.of(0), trimmed]) : trimmed);
}

const b64url = (value: string | undefined): Buffer => Buffer.from(value ?? '', 'base64url');

const CURVES = { 'P-256': 'nistp256', 'P-384': 'nistp384', 'P-521': 'nistp521' } as const;

/** The SSH wire blob of a public key given as a JWK. */
export function sshBlob(jwk: JsonWebKey): Buffer {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519')
    return Buffer.concat([sshString('ssh-ed25519'), sshString(b64url(jwk.x))]);
  if (jwk.kty === 'RSA')
    return Buffer.concat([sshString('ssh-rsa'), sshMpint(b64url(jwk.e)), sshMpint(b64url(jwk.n))]);
  if (jwk.kty === 'EC' && jwk.crv && jwk.crv in CURVES) {
    const curve = CURVES[jwk.crv as keyof typeof CURVES];
    const point = Buffer.concat([Buffer.of(4), b64url(jwk.x), b64url(jwk.y)]);
    return Buffer.concat([sshString(`ecdsa-sha2-${curve}`), sshString(curve), sshString(point)]);
  }
  throw new Error(`no SSH encoding for this JWK (${jwk.kty} ${jwk.crv ?? ''})`);
}

/** `<type> <base64>` of a blob (the type is the blob's first string). */
export function sshLine(blob: Buffer): string {
  const type = blob.subarray(4, 4 + blob.readUInt32BE(0)).toString('latin1');
  return `${type} ${blob.toString('base64')}`;
}

/** A freshly generated public key: its blob and its OpenSSH line (`<type> <base64>`). */
export function generateSshKey(
  kind: TestKeyKind = 'ed25519',
  rsaBits = 2048,
): { blob: Buffer; line: string } {
  const { publicKey } =
    kind === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : kind === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: rsaBits })
        : generateKeyPairSync('ec', { namedCurve: `P-${kind.slice('ecdsa-p'.length)}` });
  const blob = sshBlob(publicKey.export({ format: 'jwk' }));
  return { blob, line: sshLine(blob) };
}
