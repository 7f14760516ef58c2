import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  PutObjectCommand,
  type PutObjectCommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseLfsStore } from '#services/lfs-objects';
import { DEFAULT_LFS_ACTION_SECONDS } from '#shared/config';
import { LfsObjectMismatch } from '#vcs/lfs-store';
import {
  CHECKSUM_HEADER,
  type LfsS3Command,
  oidChecksum,
  type S3Sender,
  s3LfsStore,
} from '#vcs/lfs-store-s3';

const BUCKET = 'lfs-objects-bucket';
const REGION = 'eu-west-1';
const context = { webUrl: 'https://web.example', authorization: 'RemoteAuth for-the-local-store-only' };

/** Signs only: static fake credentials, a fixed region, nothing is ever sent with it. */
const signer = () =>
  new S3Client({
    region: REGION,
    credentials: { accessKeyId: 'AKIAFAKEFORTESTS', secretAccessKey: 'fake-secret-for-tests' },
  });

/** A bucket in memory that records every command it is sent. */
function recordingBucket(objects = new Map<string, Buffer>()) {
  const sent: LfsS3Command[] = [];
  const send = async (command: LfsS3Command): Promise<HeadObjectCommandOutput | PutObjectCommandOutput> => {
    sent.push(command);
    const key = command.input.Key ?? '';
    if (command instanceof HeadObjectCommand) {
      const found = objects.get(key);
      if (!found)
        throw Object.assign(new Error('NotFound'), { name: 'NotFound', $metadata: { httpStatusCode: 404 } });
      return { ContentLength: found.length, $metadata: { httpStatusCode: 200 } };
    }
    const chunks: Buffer[] = [];
    for await (const chunk of command.input.Body as Readable) chunks.push(Buffer.from(chunk));
    const body = Buffer.concat(chunks);
    // What S3 checks with ContentLength and ChecksumSHA256.
    expect(body.length).toBe(command.input.ContentLength);
    expect(createHash('sha256').update(body).digest('base64')).toBe(command.input.ChecksumSHA256);
    objects.set(key, body);
    return { $metadata: { httpStatusCode: 200 } };
  };
  return { sent, objects, sender: { send } as S3Sender };
}

const content = Buffer.from('a large file, as far as this test is concerned\n');
const oid = createHash('sha256').update(content).digest('hex');

describe('s3LfsStore', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lfs-s3-'));
    file = join(dir, 'object');
    await writeFile(file, content);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('keys objects <owner>/<repo>/<oid>, folded, and answers has() from HeadObject (404 → undefined)', async () => {
    const bucket = recordingBucket(new Map([[`octo-org/hello/${oid}`, content]]));
    const store = s3LfsStore({ bucket: BUCKET, sender: bucket.sender, signer: signer() });

    expect(await store.has('Octo-Org', 'HELLO', oid)).toEqual({ size: content.length });
    expect(await store.has('octo-org', 'other', oid)).toBeUndefined();
    expect(bucket.sent.map((command) => [command.constructor.name, command.input])).toEqual([
      ['HeadObjectCommand', { Bucket: BUCKET, Key: `octo-org/hello/${oid}` }],
      ['HeadObjectCommand', { Bucket: BUCKET, Key: `octo-org/other/${oid}` }],
    ]);
  });

  it('lets errors other than 404 through', async () => {
    const denied = Object.assign(new Error('Forbidden'), {
      name: 'Forbidden',
      $metadata: { httpStatusCode: 403 },
    });
    const store = s3LfsStore({
      bucket: BUCKET,
      sender: { send: async () => Promise.reject(denied) } as S3Sender,
      signer: signer(),
    });
    await expect(store.has('octo', 'hello', oid)).rejects.toBe(denied);
  });

  it('downloads through a presigned GetObject URL on the folded key, valid as long as expires_in says', async () => {
    const bucket = recordingBucket();
    const store = s3LfsStore({ bucket: BUCKET, sender: bucket.sender, signer: signer() });

    const action = await store.downloadAction('Octo', 'Hello', oid, context);

    const url = new URL(action.href);
    expect(url.host).toBe(`${BUCKET}.s3.${REGION}.amazonaws.com`);
    expect(url.pathname).toBe(`/octo/hello/${oid}`);
    expect(url.searchParams.get('x-id')).toBe('GetObject');
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      /^AKIAFAKEFORTESTS\/\d{8}\/eu-west-1\/s3\/aws4_request$/,
    );
    expect(url.searchParams.get('X-Amz-Expires')).toBe(String(DEFAULT_LFS_ACTION_SECONDS));
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(action.expires_in).toBe(DEFAULT_LFS_ACTION_SECONDS);
    // S3 refuses a request with both a query signature and an Authorization header.
    expect(action.header?.Authorization).toBeUndefined();
    expect(bucket.sent).toEqual([]);
  });

  it('uploads through a presigned PutObject URL that signs the length and the SHA-256 the client must send', async () => {
    const bucket = recordingBucket();
    const store = s3LfsStore({
      bucket: BUCKET,
      sender: bucket.sender,
      signer: signer(),
      expiresInSeconds: 900,
    });

    const action = await store.uploadAction('Octo', 'Hello', oid, content.length, context);

    const url = new URL(action.href);
    expect(url.pathname).toBe(`/octo/hello/${oid}`);
    expect(url.searchParams.get('x-id')).toBe('PutObject');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual([
      'content-length',
      'host',
      CHECKSUM_HEADER,
    ]);
    // A header, not a query parameter: signed, so a client cannot send other content under this URL.
    expect(url.searchParams.has(CHECKSUM_HEADER)).toBe(false);
    expect(action.header).toEqual({
      [CHECKSUM_HEADER]: createHash('sha256').update(content).digest('base64'),
    });
    expect(action.expires_in).toBe(900);
    expect(bucket.sent).toEqual([]);
  });

  it('signs another URL for another size or oid', async () => {
    const store = s3LfsStore({ bucket: BUCKET, sender: recordingBucket().sender, signer: signer() });
    const signature = async (size: number, forOid: string) =>
      new URL((await store.uploadAction('octo', 'hello', forOid, size, context)).href).searchParams.get(
        'X-Amz-Signature',
      );
    const base = await signature(content.length, oid);
    expect(await signature(content.length + 1, oid)).not.toBe(base);
    expect(await signature(content.length, 'b'.repeat(64))).not.toBe(base);
  });

  it('puts a file with its length and checksum, once: a second put finds it and sends nothing', async () => {
    const bucket = recordingBucket();
    const store = s3LfsStore({ bucket: BUCKET, sender: bucket.sender, signer: signer() });

    await store.put('Octo', 'Hello', oid, file);
    await store.put('octo', 'hello', oid, file);

    expect(bucket.objects.get(`octo/hello/${oid}`)).toEqual(content);
    expect(bucket.sent.map((command) => command.constructor.name)).toEqual([
      'HeadObjectCommand',
      'PutObjectCommand',
      'HeadObjectCommand',
    ]);
    const put = bucket.sent[1] as PutObjectCommand;
    expect(put).toBeInstanceOf(PutObjectCommand);
    expect(put.input).toMatchObject({
      Bucket: BUCKET,
      Key: `octo/hello/${oid}`,
      ContentLength: content.length,
      ChecksumSHA256: oidChecksum(oid),
    });
  });

  it('refuses a file that does not hash to its oid before sending it', async () => {
    const bucket = recordingBucket();
    const store = s3LfsStore({ bucket: BUCKET, sender: bucket.sender, signer: signer() });

    await expect(store.put('octo', 'hello', 'c'.repeat(64), file)).rejects.toBeInstanceOf(LfsObjectMismatch);
    expect(bucket.sent.filter((command) => command instanceof PutObjectCommand)).toEqual([]);
    expect(bucket.objects.size).toBe(0);
  });

  it('refuses what is not an oid before building a key or sending anything', async () => {
    const bucket = recordingBucket();
    const store = s3LfsStore({ bucket: BUCKET, sender: bucket.sender, signer: signer() });
    const notOid = '../other-owner/repo/'.padEnd(64, 'a');

    await expect(store.has('octo', 'hello', notOid)).rejects.toBeInstanceOf(LfsObjectMismatch);
    await expect(store.downloadAction('octo', 'hello', notOid, context)).rejects.toBeInstanceOf(
      LfsObjectMismatch,
    );
    await expect(store.uploadAction('octo', 'hello', notOid, 1, context)).rejects.toBeInstanceOf(
      LfsObjectMismatch,
    );
    expect(bucket.sent).toEqual([]);
  });
});

describe('chooseLfsStore', () => {
  it('keeps objects in the hosted repositories without LFS_BUCKET, and in S3 with it', async () => {
    const settings = { repositoriesDir: '/unused', lfsActionSeconds: 120 };
    expect(chooseLfsStore({ ...settings, lfsBucket: undefined }).kind).toBe('local');

    const chosen = chooseLfsStore({ ...settings, lfsBucket: BUCKET }, signer);
    expect(chosen).toMatchObject({ kind: 's3', bucket: BUCKET });
    const action = await chosen.store.downloadAction('octo', 'hello', oid, context);
    const url = new URL(action.href);
    expect(url.pathname).toBe(`/octo/hello/${oid}`);
    // The configured lifetime (LFS_ACTION_SECONDS) is the presigned URL's.
    expect(url.searchParams.get('X-Amz-Expires')).toBe('120');
  });
});
