/**
 * The Git LFS API of hosted repositories (https://github.com/git-lfs/git-lfs/blob/main/docs/api/batch.md):
 * the batch endpoint with the `basic` transfer, and the object route of the local store.
 */
import type { Readable } from 'node:stream';
import { HttpError, notFound } from '#shared/errors';
import { isLfsOid } from '#vcs/hosted-paths';
import { ensureBareRepository } from '#vcs/http-backend';
import { type ActionContext, LFS_ACTION_SECONDS, type LfsAction, LfsObjectMismatch } from '#vcs/lfs-store';
import type { Caller } from './authenticate.ts';
import { hostedRepository } from './hosted-git.ts';
import { lfsStore, localObjectStore } from './lfs-objects.ts';

const validation = (message: string): HttpError => new HttpError(422, message);

/**
 * The one check of an object id the API is given (in a batch, a download or an upload path):
 * SHA-256 in lower-case hex (`isLfsOid`), else 422 before anything is looked up or stored.
 */
function checkedOid(oid: unknown): string {
  if (typeof oid !== 'string' || !isLfsOid(oid))
    throw validation('oid must be a SHA-256 in lower-case hex (64 characters)');
  return oid;
}

interface BatchObject {
  readonly oid: string;
  readonly size: number;
}

interface BatchRequest {
  readonly operation: 'download' | 'upload';
  readonly objects: readonly BatchObject[];
}

/** The most objects one batch may name (git-lfs sends 100 at a time). */
const MAX_OBJECTS = 1000;

function parseBatch(body: Buffer): BatchRequest & { hashAlgo?: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw validation('Problems parsing JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw validation('Body should be a JSON object');
  const { operation, objects, hash_algo: hashAlgo } = parsed as Record<string, unknown>;
  if (operation !== 'download' && operation !== 'upload')
    throw validation('operation must be "download" or "upload"');
  if (!Array.isArray(objects) || objects.length > MAX_OBJECTS)
    throw validation(`objects must be an array of at most ${MAX_OBJECTS} objects`);
  const checked = objects.map((object: unknown) => {
    const { oid, size } = (object ?? {}) as Record<string, unknown>;
    return { oid: checkedOid(oid), size: typeof size === 'number' ? size : Number.NaN };
  });
  return { operation, objects: checked, hashAlgo };
}

type BatchObjectReply =
  | (BatchObject & { authenticated?: true; actions?: Record<string, LfsAction> })
  | (BatchObject & { error: { code: number; message: string } });

/**
 * Answers a batch request: `download` needs read access and reports missing objects as per-object
 * 404s; `upload` needs write access and omits the actions of objects the repository already has.
 * A malformed oid fails the whole request (422); a malformed size is a per-object 422.
 */
export async function lfsBatch(
  caller: Caller,
  ownerLogin: string,
  repoParam: string,
  body: Buffer,
  context: ActionContext,
): Promise<{ transfer: 'basic'; objects: BatchObjectReply[]; hash_algo: 'sha256' }> {
  const batch = parseBatch(body);
  const hosted = await hostedRepository(
    caller,
    ownerLogin,
    repoParam,
    batch.operation === 'upload' ? 'write' : 'read',
  );
  if (batch.hashAlgo !== undefined && batch.hashAlgo !== 'sha256')
    throw new HttpError(409, 'Unsupported hash algorithm');
  const owner = hosted.owner.login;
  const repo = hosted.repository.name;
  const authenticated = context.authorization ? ({ authenticated: true } as const) : {};
  const objects = await Promise.all(
    batch.objects.map(async ({ oid, size }): Promise<BatchObjectReply> => {
      if (!Number.isSafeInteger(size) || size < 0)
        return {
          oid,
          size: Number.isFinite(size) ? size : 0,
          error: { code: 422, message: 'Invalid object' },
        };
      const found = await lfsStore().has(owner, repo, oid);
      if (batch.operation === 'download') {
        if (!found) return { oid, size, error: { code: 404, message: 'Object does not exist' } };
        const action = await lfsStore().downloadAction(owner, repo, oid, context);
        return {
          oid,
          size: found.size,
          ...authenticated,
          actions: { download: { expires_in: LFS_ACTION_SECONDS, ...action } },
        };
      }
      if (found) return { oid, size: found.size };
      const action = await lfsStore().uploadAction(owner, repo, oid, size, context);
      return {
        oid,
        size,
        ...authenticated,
        actions: { upload: { expires_in: LFS_ACTION_SECONDS, ...action } },
      };
    }),
  );
  return { transfer: 'basic', objects, hash_algo: 'sha256' };
}

/**
 * An object's size and bytes, streamed (the local store's download href); 422 for a malformed oid,
 * 404 when the repository lacks it, and always where objects live in S3 (no action points here
 * then).
 */
export async function lfsDownload(
  caller: Caller,
  ownerLogin: string,
  repoParam: string,
  oid: string,
): Promise<{ size: number; stream: Readable }> {
  checkedOid(oid);
  const hosted = await hostedRepository(caller, ownerLogin, repoParam, 'read');
  const found = await localObjectStore()?.open(hosted.owner.login, hosted.repository.name, oid);
  if (!found) throw notFound();
  return found;
}

/**
 * Stores an uploaded object (the local store's upload href) by the owner, streamed: its oid
 * well-formed, its SHA-256 its oid and its length the size the batch announced (`?size=`), else
 * 422 and nothing is stored. 404 where objects live in S3.
 */
export async function lfsUpload(
  caller: Caller,
  ownerLogin: string,
  repoParam: string,
  oid: string,
  body: Readable,
  announcedSize: string | undefined,
): Promise<void> {
  checkedOid(oid);
  const hosted = await hostedRepository(caller, ownerLogin, repoParam, 'write');
  const expectedSize = announcedSize === undefined ? undefined : Number(announcedSize);
  if (expectedSize !== undefined && !(Number.isSafeInteger(expectedSize) && expectedSize >= 0))
    throw validation('size must be a non-negative integer');
  const store = localObjectStore();
  if (!store) throw notFound();
  // The objects live inside the bare repository: an upload before the first push makes it, as
  // the push would, rather than a bare `lfs/` directory that is not a repository.
  await ensureBareRepository(hosted.path, hosted.repository.defaultBranch);
  try {
    await store.write(hosted.owner.login, hosted.repository.name, oid, body, expectedSize);
  } catch (error) {
    if (error instanceof LfsObjectMismatch) throw validation(error.message);
    throw error;
  }
}
