import { createHash, createPublicKey } from 'node:crypto';
import { sameAsciiCaseless } from './ascii-case.ts';

/**
 * SSH public keys: users' SSH keys and repositories' deploy keys. A key is accepted in OpenSSH's
 * one-line format, `<type> <base64 wire blob> [comment]`, and stored and returned as GitHub does:
 * `<type> <base64>`, without the comment. One public key may be registered once on the whole
 * service (as on GitHub), whatever it is attached to; its fingerprint is the uniqueness key.
 */

/** A user's SSH key. */
export interface UserKey {
  readonly id: number;
  /** The user the key belongs to (and who created it). */
  readonly login: string;
  /** Normalized `<type> <base64>`. */
  readonly key: string;
  readonly fingerprint: string;
  readonly title: string;
  /** client_id of the OAuth application whose token created it; empty for a password or personal token. */
  readonly clientId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A repository's deploy key. */
export interface DeployKey {
  readonly id: number;
  /** Owner and name of the repository, in its own spelling. */
  readonly owner: string;
  readonly repo: string;
  /** The user who created it: whose grant, when revoked, takes it along. */
  readonly createdBy: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly title: string;
  readonly readOnly: boolean;
  /** client_id of the OAuth application whose token created it; empty for a password or personal token. */
  readonly clientId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export type ParsedPublicKey =
  | {
      readonly valid: true;
      readonly type: KeyType;
      /** `<type> <base64>`: what is stored and returned. */
      readonly key: string;
      /** `SHA256:<unpadded base64 of the SHA-256 of the blob>`, as `ssh-keygen -lf` prints it. */
      readonly fingerprint: string;
      /** Whatever followed the base64 (often `user@host`); empty when none. */
      readonly comment: string;
    }
  | { readonly valid: false; readonly reason: string };

const ECDSA_CURVES = {
  'ecdsa-sha2-nistp256': { curve: 'nistp256', jwk: 'P-256', coordinateBytes: 32 },
  'ecdsa-sha2-nistp384': { curve: 'nistp384', jwk: 'P-384', coordinateBytes: 48 },
  'ecdsa-sha2-nistp521': { curve: 'nistp521', jwk: 'P-521', coordinateBytes: 66 },
} as const;

export const KEY_TYPES = ['ssh-ed25519', 'ssh-rsa', ...Object.keys(ECDSA_CURVES)] as readonly string[];
export type KeyType = 'ssh-ed25519' | 'ssh-rsa' | keyof typeof ECDSA_CURVES;

const isKeyType = (value: string): value is KeyType => KEY_TYPES.includes(value);

/** GitHub refuses RSA keys shorter than 1024 bits. */
export const MIN_RSA_BITS = 1024;
/** OpenSSH's own upper bound (SSH_RSA_MAXIMUM_MODULUS_SIZE); nothing longer is a usable SSH key. */
export const MAX_RSA_BITS = 16384;

export const MAX_TITLE_LENGTH = 255;

/**
 * The longest key data accepted, in base64 characters: a 16384-bit RSA key with an exponent as
 * long as its modulus is about 5,500. Checked before anything is decoded.
 */
export const MAX_KEY_BASE64_LENGTH = 8192;
/** The longest key line (type, data and comment); the comment only ever feeds a 255-character title. */
export const MAX_KEY_LINE_LENGTH = 16384;

/**
 * A key problem in the shape of GitHub's 422 `errors[]` entry; the HTTP layer puts it in the
 * `Validation Failed` response (domain code raises no HTTP errors).
 */
export interface KeyFieldError {
  readonly resource: 'PublicKey';
  readonly field: 'key';
  readonly code: 'custom';
  readonly message: string;
}

/** GitHub's 422 errors for a key that does not parse, and for one registered anywhere already. */
export const INVALID_KEY: KeyFieldError = {
  resource: 'PublicKey',
  field: 'key',
  code: 'custom',
  message: 'key is invalid. You must supply a key in OpenSSH public key format',
};
export const KEY_IN_USE: KeyFieldError = {
  resource: 'PublicKey',
  field: 'key',
  code: 'custom',
  message: 'key is already in use',
};

/** Reads the SSH wire format (RFC 4251 §5): `string` and `mpint` are a uint32 length and bytes. */
class WireReader {
  private offset = 0;
  constructor(private readonly buffer: Buffer) {}

  string(): Buffer | undefined {
    if (this.offset + 4 > this.buffer.length) return undefined;
    const length = this.buffer.readUInt32BE(this.offset);
    const start = this.offset + 4;
    if (start + length > this.buffer.length) return undefined;
    this.offset = start + length;
    return this.buffer.subarray(start, start + length);
  }

  get done(): boolean {
    return this.offset === this.buffer.length;
  }
}

const invalid = (reason: string): ParsedPublicKey => ({ valid: false, reason });

/** Bits of a non-negative mpint's value (leading zero bytes do not count). */
function bitLength(mpint: Buffer): number {
  let start = 0;
  while (start < mpint.length && mpint[start] === 0) start++;
  if (start === mpint.length) return 0;
  return (mpint.length - start - 1) * 8 + (mpint[start] as number).toString(2).length;
}

const isOdd = (mpint: Buffer): boolean => ((mpint.at(-1) ?? 0) & 1) === 1;
const toBigInt = (mpint: Buffer): bigint => (mpint.length === 0 ? 0n : BigInt(`0x${mpint.toString('hex')}`));

/**
 * Why an RSA public key (modulus already within the size bounds) cannot be used: the public
 * exponent must be odd, at least 3 and smaller than the modulus, and the modulus odd (a product
 * of two odd primes). The exponent's length is compared first, so an oversized one is never
 * converted to a number.
 */
function rsaProblem(exponent: Buffer, modulus: Buffer): string | undefined {
  if (!isOdd(modulus)) return 'RSA modulus is even';
  if (bitLength(exponent) > bitLength(modulus)) return 'RSA exponent larger than the modulus';
  const e = toBigInt(exponent);
  if (e < 3n) return 'RSA exponent too small';
  if (!isOdd(exponent)) return 'RSA exponent is even';
  if (e >= toBigInt(modulus)) return 'RSA exponent larger than the modulus';
  return undefined;
}

/** Why the blob is not a key of `type`, or undefined when it is one. */
function blobProblem(type: KeyType, reader: WireReader): string | undefined {
  if (type === 'ssh-ed25519') {
    const point = reader.string();
    if (point?.length !== 32) return 'an ed25519 key is 32 bytes';
  } else if (type === 'ssh-rsa') {
    const exponent = reader.string();
    const modulus = reader.string();
    if (!exponent || !modulus) return 'truncated RSA key';
    // mpints are two's complement: a set top bit would make them negative.
    if (((exponent[0] ?? 0) & 0x80) !== 0 || ((modulus[0] ?? 0) & 0x80) !== 0) return 'negative RSA number';
    const bits = bitLength(modulus);
    if (bits < MIN_RSA_BITS) return `RSA keys must be at least ${MIN_RSA_BITS} bits`;
    if (bits > MAX_RSA_BITS) return `RSA keys must be at most ${MAX_RSA_BITS} bits`;
    return rsaProblem(exponent, modulus) ?? (reader.done ? undefined : 'trailing bytes after the key');
  } else {
    const { curve, jwk, coordinateBytes } = ECDSA_CURVES[type];
    const name = reader.string();
    const point = reader.string();
    if (name?.toString('latin1') !== curve) return 'curve name does not match the key type';
    // Only uncompressed points (0x04 || X || Y), which is what OpenSSH writes.
    if (point?.length !== 1 + 2 * coordinateBytes || point[0] !== 0x04) return 'malformed ECDSA point';
    try {
      // OpenSSL refuses coordinates that are not a point on the curve.
      createPublicKey({
        key: {
          kty: 'EC',
          crv: jwk,
          x: point.subarray(1, 1 + coordinateBytes).toString('base64url'),
          y: point.subarray(1 + coordinateBytes).toString('base64url'),
        },
        format: 'jwk',
      });
    } catch {
      return 'the ECDSA point is not on the curve';
    }
  }
  return reader.done ? undefined : 'trailing bytes after the key';
}

/**
 * Parses one OpenSSH public key line. Accepted types: `ssh-ed25519`, `ssh-rsa` (1024 to 16384
 * bits, odd exponent from 3 up to below the modulus) and `ecdsa-sha2-nistp256|384|521` (a point on
 * the curve). Lines over 16 KiB and key data over 8 KiB of base64 are refused unread. The base64 must be canonical and the blob must be a
 * well-formed key of the declared type, with nothing after it.
 */
export function parsePublicKey(line: string): ParsedPublicKey {
  if (line.length > MAX_KEY_LINE_LENGTH) return invalid('key line too long');
  const [type = '', base64 = '', ...comment] = line.trim().split(/\s+/);
  if (!isKeyType(type)) return invalid('unsupported key type');
  if (base64.length > MAX_KEY_BASE64_LENGTH) return invalid('key data too long');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || base64.length % 4 !== 0) return invalid('not base64');
  const blob = Buffer.from(base64, 'base64');
  // Buffer.from ignores stray bits; re-encoding catches a non-canonical encoding.
  if (blob.toString('base64') !== base64) return invalid('not base64');
  const reader = new WireReader(blob);
  if (reader.string()?.toString('latin1') !== type) return invalid('the key data is of another type');
  const problem = blobProblem(type, reader);
  if (problem) return invalid(problem);
  return {
    valid: true,
    type,
    key: `${type} ${base64}`,
    fingerprint: fingerprintOf(blob),
    comment: comment.join(' '),
  };
}

/** OpenSSH's SHA-256 fingerprint of a key blob: `SHA256:` and unpadded base64. */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The title a key gets: the one given, else the key line's comment (cut to the limit), else empty. */
export function keyTitle(title: string | undefined, comment: string): string {
  return title ?? comment.slice(0, MAX_TITLE_LENGTH);
}

/** Only a repository's owner sees and manages its deploy keys (everyone else gets 404). */
export function mayManageDeployKeys(repository: { readonly ownerLogin: string }, login: string): boolean {
  return sameAsciiCaseless(repository.ownerLogin, login);
}

/** The id in a `{key_id}` path segment; undefined for anything but a positive decimal integer. */
export function keyIdParam(value: string | undefined): number | undefined {
  if (value === undefined || !/^[1-9]\d{0,14}$/.test(value)) return undefined;
  return Number(value);
}
