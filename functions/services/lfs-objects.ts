/**
 * The one place that decides where this deployment keeps Git LFS objects: in S3 when `LFS_BUCKET`
 * is set (AWS), else in each hosted repository (the local stack, tests). The batch API and the
 * import's push step take the store from here.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { type Config, config } from '#shared/config';
import { type LfsStore, type LocalLfsStore, localLfsStore } from '#vcs/lfs-store';
import { s3LfsStore } from '#vcs/lfs-store-s3';

export type LfsStoreChoice =
  | { readonly kind: 'local'; readonly store: LocalLfsStore }
  | { readonly kind: 's3'; readonly bucket: string; readonly store: LfsStore };

/**
 * The store a configuration selects. One S3 client sends and signs: in Lambda it takes the region
 * and the role's credentials from the environment.
 */
export function chooseLfsStore(
  settings: Pick<Config, 'lfsBucket' | 'repositoriesDir' | 'lfsActionSeconds'>,
  s3Client: () => S3Client = () => new S3Client({}),
): LfsStoreChoice {
  if (settings.lfsBucket === undefined)
    return { kind: 'local', store: localLfsStore(settings.repositoriesDir) };
  const client = s3Client();
  return {
    kind: 's3',
    bucket: settings.lfsBucket,
    store: s3LfsStore({
      bucket: settings.lfsBucket,
      sender: client,
      signer: client,
      expiresInSeconds: settings.lfsActionSeconds,
    }),
  };
}

let chosen: LfsStoreChoice | undefined;
const choice = (): LfsStoreChoice => {
  chosen ??= chooseLfsStore(config());
  return chosen;
};

/** The deployment's LFS store. */
export const lfsStore = (): LfsStore => choice().store;

/**
 * The store behind the service's own object route (`GET`/`PUT …/info/lfs/objects/{oid}`), which
 * only the local store's actions point at; undefined where objects live in S3.
 */
export function localObjectStore(): LocalLfsStore | undefined {
  const current = choice();
  return current.kind === 'local' ? current.store : undefined;
}
