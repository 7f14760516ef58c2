/**
 * The Git LFS API of hosted repositories (https://github.com/git-lfs/git-lfs/blob/main/docs/api/batch.md):
 * the batch endpoint with the `basic` transfer, and the object route of the local store.
 *
 * An action never carries the caller's credentials. It carries its own, valid for its one
 * operation on its one object of its one repository for `LFS_ACTION_SECONDS`: a presigned URL
 * where objects live in S3, a `RemoteAuth` token (`lfs-action-tokens.ts`) for the local store's
 * object route, which also still takes the caller's own credentials, as GitHub's does.
 */
import type { Readable } from 'node:stream';
import type { LfsOperation } from '#domain/lfs-action-tokens';
import { config } from '#shared/config';
import { badCredentials, HttpError, notFound } from '#shared/errors';
import { isLfsOid } from '#vcs/hosted-paths';
import { ensureBareRepository } from '#vcs/http-backend';
import { type ActionContext, type LfsAction, LfsObjectMismatch } from '#vcs/lfs-store';
import type { Caller } from './authenticate.ts';
import {
  type HostedRepository,
  hostedRepository,
  namedRepository,
  refuseWhileFollowing,
} from './hosted-git.ts';
import { issueLfsActionToken, lfsActionTokenAccepted } from './lfs-action-tokens.ts';
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
  | (BatchObject & { authenticated?: true; actions?: Record<string, LfsAction & { expires_at: string }> })
  | (BatchObject & { error: { code: number; message: string } });

/**
 * Answers a batch request: `download` needs read access and reports missing objects as per-object
 * 404s; `upload` needs write access and omits the actions of objects the repository already has.
 * A malformed oid fails the whole request (422); a malformed size is a per-object 422. Every
 * action expires `LFS_ACTION_SECONDS` after the answer (`expires_in`, `expires_at`).
 */
export async function lfsBatch(
  caller: Caller,
  ownerLogin: string,
  repoParam: string,
  body: Buffer,
  webUrl: string,
): Promise<{ transfer: 'basic'; objects: BatchObjectReply[]; hash_algo: 'sha256' }> {
  const batch = parseBatch(body);
  const { operation } = batch;
  const hosted = await hostedRepository(
    caller,
    ownerLogin,
    repoParam,
    operation === 'upload' ? 'write' : 'read',
  );
  if (batch.hashAlgo !== undefined && batch.hashAlgo !== 'sha256')
    throw new HttpError(409, 'Unsupported hash algorithm');
  const owner = hosted.owner.login;
  const repo = hosted.repository.name;
  const lifetime = config().lfsActionSeconds;
  const expiresAtMs = Date.now() + lifetime * 1000;
  const expiry = { expires_in: lifetime, expires_at: new Date(expiresAtMs).toISOString() };
  // Only the local store's actions point at our own object route, which needs the token.
  const ownRoute = localObjectStore() !== undefined;
  const contextFor = (oid: string): ActionContext => {
    if (!ownRoute) return { webUrl };
    const grant = { operation, repositoryId: hosted.repository.id, oid };
    return { webUrl, authorization: `RemoteAuth ${issueLfsActionToken(grant, expiresAtMs)}` };
  };
  const objects = await Promise.all(
    batch.objects.map(async ({ oid, size }): Promise<BatchObjectReply> => {
      if (!Number.isSafeInteger(size) || size < 0)
        return {
          oid,
          size: Number.isFinite(size) ? size : 0,
          error: { code: 422, message: 'Invalid object' },
        };
      const found = await lfsStore().has(owner, repo, oid);
      if (operation === 'download') {
        if (!found) return { oid, size, error: { code: 404, message: 'Object does not exist' } };
        const action = await lfsStore().downloadAction(owner, repo, oid, contextFor(oid));
        return {
          oid,
          size: found.size,
          authenticated: true,
          actions: { download: { ...action, ...expiry } },
        };
      }
      if (found) return { oid, size: found.size };
      const action = await lfsStore().uploadAction(owner, repo, oid, size, contextFor(oid));
      return { oid, size, authenticated: true, actions: { upload: { ...action, ...expiry } } };
    }),
  );
  return { transfer: 'basic', objects, hash_algo: 'sha256' };
}

/**
 * The repository an object route acts on: by the caller's own access, as every Git route, or by
 * an LFS action token granting exactly this operation on this object of this repository, still
 * unexpired. A token that does not is 401 `Bad credentials` (git-lfs then asks for credentials),
 * whichever part failed; an upload while the repository follows its origin is 403, as for the
 * caller's own credentials.
 */
async function objectRepository(
  caller: Caller,
  ownerLogin: string,
  repoParam: string,
  operation: LfsOperation,
  oid: string,
): Promise<HostedRepository> {
  if (caller.kind !== 'lfs-action')
    return hostedRepository(caller, ownerLogin, repoParam, operation === 'upload' ? 'write' : 'read');
  const named = await namedRepository(ownerLogin, repoParam);
  if (!named || !lfsActionTokenAccepted(caller.token, { operation, repositoryId: named.repository.id, oid }))
    throw badCredentials();
  // A token issued before following began must not write while the repository is read-only.
  if (operation === 'upload') await refuseWhileFollowing(named);
  return named;
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
  const hosted = await objectRepository(caller, ownerLogin, repoParam, 'download', oid);
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
  const hosted = await objectRepository(caller, ownerLogin, repoParam, 'upload', oid);
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
