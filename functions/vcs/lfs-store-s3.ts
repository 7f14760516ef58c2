/**
 * Git LFS objects in S3 (docs/decisions.md, "Hosted repositories"): the batch API's actions are
 * presigned S3 URLs, so objects never pass through API Gateway or Lambda, and S3 itself refuses an
 * upload whose SHA-256 is not its oid or whose length is not the announced size.
 *
 * Presigning is local computation with the signer's credentials (no request is sent); a presigned
 * URL acts with the permissions of the role that signed it, for at most `expiresInSeconds` (less
 * if the role's session credentials expire first).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import {
  GetObjectCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  PutObjectCommand,
  type PutObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DEFAULT_LFS_ACTION_SECONDS } from '#shared/config';
import { isLfsOid, lfsObjectKey } from './hosted-paths.ts';
import { type LfsAction, LfsObjectMismatch, type LfsStore } from './lfs-store.ts';

/** The header S3 checks an upload against; signed, so the client must send it unchanged. */
export const CHECKSUM_HEADER = 'x-amz-checksum-sha256';

/** The commands the store sends (everything else is presigned, never sent). */
export type LfsS3Command = HeadObjectCommand | PutObjectCommand;

/** What the store needs of an S3 client to send: an `S3Client`, or a stand-in in tests. */
export interface S3Sender {
  send(command: HeadObjectCommand): Promise<HeadObjectCommandOutput>;
  send(command: PutObjectCommand): Promise<PutObjectCommandOutput>;
}

export interface S3LfsStoreOptions {
  readonly bucket: string;
  /** Sends HeadObject and PutObject. */
  readonly sender: S3Sender;
  /** Presigns GetObject and PutObject: its region and credentials sign the URLs. */
  readonly signer: S3Client;
  /** How long a presigned URL stays valid (`LFS_ACTION_SECONDS`). @default DEFAULT_LFS_ACTION_SECONDS */
  readonly expiresInSeconds?: number;
}

/** S3's `ChecksumSHA256`: the digest in base64, where the oid is the digest in hex. */
export const oidChecksum = (oid: string): string => Buffer.from(oid, 'hex').toString('base64');

/** HeadObject on a missing key: 404, given s3:ListBucket on the bucket (without it S3 answers 403). */
const isNotFound = (error: unknown): boolean => {
  const candidate = error as { name?: unknown; $metadata?: { httpStatusCode?: unknown } } | null;
  return candidate?.name === 'NotFound' || candidate?.$metadata?.httpStatusCode === 404;
};

/**
 * Objects at `<folded owner>/<folded repo>/<oid>` in one bucket. An action's only credential is
 * its signature, scoped to one key, one method and `expiresInSeconds`; it carries no
 * `Authorization` (S3 refuses a request that has both a header and a query signature).
 */
export function s3LfsStore(options: S3LfsStoreOptions): LfsStore {
  const { bucket, sender, signer } = options;
  const expiresIn = options.expiresInSeconds ?? DEFAULT_LFS_ACTION_SECONDS;
  const keyOf = (owner: string, repo: string, oid: string): string => {
    if (!isLfsOid(oid)) throw new LfsObjectMismatch(`not an LFS oid: ${oid.slice(0, 80)}`);
    return lfsObjectKey(owner, repo, oid);
  };
  const head = async (key: string): Promise<{ size: number } | undefined> => {
    try {
      const found = await sender.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { size: found.ContentLength ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };
  return {
    async has(owner, repo, oid) {
      return head(keyOf(owner, repo, oid));
    },
    async downloadAction(owner, repo, oid): Promise<LfsAction> {
      const command = new GetObjectCommand({ Bucket: bucket, Key: keyOf(owner, repo, oid) });
      return { href: await getSignedUrl(signer, command, { expiresIn }), expires_in: expiresIn };
    },
    async uploadAction(owner, repo, oid, size): Promise<LfsAction> {
      const checksum = oidChecksum(oid);
      const command = new PutObjectCommand({
        Bucket: bucket,
        Key: keyOf(owner, repo, oid),
        ContentLength: size,
        ChecksumSHA256: checksum,
      });
      // Content-Length is signed anyway (git-lfs sends the object's length); the checksum stays a
      // header instead of a query parameter, so that it is signed and S3 verifies the body with it.
      const href = await getSignedUrl(signer, command, {
        expiresIn,
        unhoistableHeaders: new Set([CHECKSUM_HEADER]),
      });
      return { href, header: { [CHECKSUM_HEADER]: checksum }, expires_in: expiresIn };
    },
    async put(owner, repo, oid, file) {
      const key = keyOf(owner, repo, oid);
      if (await head(key)) return;
      const hash = createHash('sha256');
      await pipeline(createReadStream(file), hash);
      if (hash.digest('hex') !== oid)
        throw new LfsObjectMismatch(`content of ${file} does not hash to ${oid}`);
      const { size } = await stat(file);
      await sender.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: createReadStream(file),
          ContentLength: size,
          ContentType: 'application/octet-stream',
          ChecksumSHA256: oidChecksum(oid),
        }),
      );
    },
  };
}
