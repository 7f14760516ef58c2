/**
 * Where Git LFS objects live, behind one port. The batch API asks the store for the actions a
 * client should take (`href` + headers); the import worker puts objects into it directly.
 *
 * - `localLfsStore` (here): objects under each hosted bare repository (`lfsObjectPath`), the
 *   actions point at the service's own object route on the Git front end, which streams them. Used
 *   locally (AWS keeps objects in S3).
 * - `s3LfsStore` (`lfs-store-s3.ts`): objects in an S3 bucket, the actions are presigned S3 URLs,
 *   so large objects never pass through API Gateway or Lambda. Chosen where `LFS_BUCKET` is set.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { hostedRepositoryPath, isLfsOid, lfsObjectPath } from './hosted-paths.ts';

/** One LFS action (`download` or `upload`) as the batch API's `actions.*` carries it. */
export interface LfsAction {
  readonly href: string;
  readonly header?: Readonly<Record<string, string>>;
  readonly expires_in?: number;
}

/** What an action is built with: the public web URL, and the action's own credential. */
export interface ActionContext {
  readonly webUrl: string;
  /**
   * The `Authorization` the local store's action carries (`RemoteAuth <token>`, made for this
   * one action), so `git lfs` sends it to the href without asking. Never the caller's own.
   */
  readonly authorization?: string | undefined;
}

/** The object could not be stored: its content does not hash to its oid, or its size is wrong. */
export class LfsObjectMismatch extends Error {
  override readonly name = 'LfsObjectMismatch';
}

export interface LfsStore {
  /** The object's size when the repository has it. */
  has(owner: string, repo: string, oid: string): Promise<{ size: number } | undefined>;
  downloadAction(owner: string, repo: string, oid: string, context: ActionContext): Promise<LfsAction>;
  uploadAction(
    owner: string,
    repo: string,
    oid: string,
    size: number,
    context: ActionContext,
  ): Promise<LfsAction>;
  /** Stores a file (the import worker); verified against `oid`, idempotent. */
  put(owner: string, repo: string, oid: string, file: string): Promise<void>;
}

/**
 * The local store's own object route serves these two (`GET`/`PUT …/info/lfs/objects/{oid}`),
 * streamed: an object is never held in memory whole.
 */
export interface LocalLfsStore extends LfsStore {
  /** The object's size and a stream of its bytes, when the repository has it. */
  open(owner: string, repo: string, oid: string): Promise<{ size: number; stream: Readable } | undefined>;
  /** Stores a stream after checking SHA-256 = `oid` and, when given, the announced size. */
  write(owner: string, repo: string, oid: string, body: Readable, expectedSize?: number): Promise<void>;
}

/** The object route's href: `{web}/{owner}/{repo}.git/info/lfs/objects/{oid}`. */
export const objectHref = (webUrl: string, owner: string, repo: string, oid: string): string =>
  `${webUrl}/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}.git/info/lfs/objects/${oid}`;

function assertOid(oid: string): void {
  if (!isLfsOid(oid)) throw new LfsObjectMismatch(`not an LFS oid: ${oid.slice(0, 80)}`);
}

/** Objects in each bare repository, git-lfs's own layout (`lfs/objects/ab/cd/<oid>`). */
export function localLfsStore(repositoriesDir: string): LocalLfsStore {
  const pathOf = (owner: string, repo: string, oid: string) => {
    assertOid(oid);
    return lfsObjectPath(hostedRepositoryPath(repositoriesDir, owner, repo), oid);
  };
  const headers = (context: ActionContext, extra: Record<string, string> = {}) => {
    const header = { ...extra, ...(context.authorization ? { Authorization: context.authorization } : {}) };
    return Object.keys(header).length > 0 ? { header } : {};
  };
  /** Written to a temporary name beside the target and renamed: readers never see half an object. */
  const commit = async (target: string, write: (temporary: string) => Promise<void>) => {
    await mkdir(dirname(target), { recursive: true });
    const temporary = `${target}.${randomUUID()}.tmp`;
    try {
      await write(temporary);
      await rename(temporary, target);
    } finally {
      await rm(temporary, { force: true });
    }
  };
  return {
    async has(owner, repo, oid) {
      const found = await stat(pathOf(owner, repo, oid)).catch(() => undefined);
      return found?.isFile() ? { size: found.size } : undefined;
    },
    async downloadAction(owner, repo, oid, context) {
      // Accept selects the binary response through API Gateway's binaryMediaTypes.
      return {
        href: objectHref(context.webUrl, owner, repo, oid),
        ...headers(context, { Accept: 'application/octet-stream' }),
      };
    },
    async uploadAction(owner, repo, oid, size, context) {
      // The announced size rides along so the object route can check the upload against it. The
      // fixed Content-Type keeps the body binary through API Gateway's binaryMediaTypes (git-lfs
      // would otherwise send a type sniffed from the content).
      return {
        href: `${objectHref(context.webUrl, owner, repo, oid)}?size=${size}`,
        ...headers(context, { 'Content-Type': 'application/octet-stream' }),
      };
    },
    async put(owner, repo, oid, file) {
      const target = pathOf(owner, repo, oid);
      if (await this.has(owner, repo, oid)) return;
      const hash = createHash('sha256');
      await pipeline(createReadStream(file), hash);
      if (hash.digest('hex') !== oid)
        throw new LfsObjectMismatch(`content of ${file} does not hash to ${oid}`);
      await commit(target, (temporary) => copyFile(file, temporary));
    },
    async open(owner, repo, oid) {
      const path = pathOf(owner, repo, oid);
      const found = await this.has(owner, repo, oid);
      return found && { size: found.size, stream: createReadStream(path) };
    },
    async write(owner, repo, oid, body, expectedSize) {
      const target = pathOf(owner, repo, oid);
      const hash = createHash('sha256');
      let size = 0;
      // Past the announced size nothing more is kept: the rest is read and dropped, so the client
      // still gets its answer (422) rather than a broken connection.
      const checked = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          if (expectedSize !== undefined && size > expectedSize) return done();
          hash.update(chunk);
          done(null, chunk);
        },
      });
      await commit(target, async (temporary) => {
        await pipeline(body, checked, createWriteStream(temporary));
        if (expectedSize !== undefined && size !== expectedSize)
          throw new LfsObjectMismatch(`size ${size} is not the announced ${expectedSize}`);
        if (hash.digest('hex') !== oid) throw new LfsObjectMismatch('content does not hash to its oid');
      });
    },
  };
}
