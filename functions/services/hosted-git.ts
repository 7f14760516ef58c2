/**
 * Hosted repositories over Git smart HTTP: who may fetch and push (GitHub's rules), serving by
 * `git http-backend`, and recording the owner's pushes.
 */

import { pipeline, type Readable, Transform } from 'node:stream';
import { followsOrigin } from '#data/imports/sync';
import { getRepository, recordPush } from '#data/repositories';
import { getUser } from '#data/users';
import { sameAsciiCaseless } from '#domain/ascii-case';
import { followingRefusal } from '#domain/import-sync';
import { canRead, type Repository } from '#domain/repositories';
import type { User } from '#domain/users';
import { config, readConfig, vendorTitle } from '#shared/config';
import { HttpError } from '#shared/errors';
import { hostedRepositoryPath } from '#vcs/hosted-paths';
import {
  type BackendResponse,
  emptyRepositoryPath,
  ensureBareRepository,
  isBareRepository,
  repositoryStats,
  startHttpBackend,
} from '#vcs/http-backend';
import { removeStaleQuarantines } from '#vcs/quarantine';
import { type QuarantineLeases, startQuarantineLeases } from '#vcs/quarantine-leases';
import { type Caller, callerHasScope } from './authenticate.ts';

export type Access = 'read' | 'write';

export interface HostedRepository {
  readonly repository: Repository;
  readonly owner: User;
  /** The bare repository's path (it may not exist yet: an empty repository). */
  readonly path: string;
  /** The pusher's login when the access asked for was `write`. */
  readonly pusher?: string;
}

const repositoryNotFound = (): HttpError => new HttpError(404, 'Repository not found.');
const authenticationRequired = (): HttpError => new HttpError(401, 'Authentication required.');

/**
 * The repository named by `{owner}` and `{repo}` (`name.git`), whoever asks; undefined when there
 * is none. Access is the caller's business (`hostedRepository`, or an LFS action token's check).
 */
export async function namedRepository(
  ownerLogin: string,
  repoParam: string,
): Promise<HostedRepository | undefined> {
  if (!repoParam.endsWith('.git')) return undefined;
  const name = repoParam.slice(0, -'.git'.length);
  if (!name) return undefined;
  const [repository, owner] = await Promise.all([getRepository(ownerLogin, name), getUser(ownerLogin)]);
  if (!repository || !owner) return undefined;
  return {
    repository,
    owner,
    path: hostedRepositoryPath(config().repositoriesDir, owner.login, repository.name),
  };
}

/**
 * The repository named by `{owner}` and `{repo}` (`name.git`) when the caller may `access` it, as
 * GitHub decides for Git clients:
 * - a repository the caller cannot see is 401 (with the challenge) to anonymous callers, so git
 *   asks for credentials, and `Repository not found.` (404) to signed-in ones; a repository that
 *   does not exist looks the same;
 * - reading a public repository needs nothing; a private one needs its owner, by password or a
 *   token with `repo`;
 * - writing needs the owner, by password or a token with `repo` (or `public_repo` for a public
 *   repository); anyone else who can see the repository is refused with 403;
 * - while the repository follows its import's origin (until the cut-over), nobody may write: 403
 *   naming the cut-over, as GitHub refuses pushes to an archived repository.
 */
export async function hostedRepository(
  caller: Caller,
  ownerLogin: string,
  repoParam: string,
  access: Access,
): Promise<HostedRepository> {
  if (!repoParam.endsWith('.git')) throw repositoryNotFound();
  const named = await namedRepository(ownerLogin, repoParam);
  const login = caller.kind === 'user' ? caller.user.login : undefined;
  const visible =
    named !== undefined &&
    canRead(named.repository, login) &&
    (!named.repository.private || callerHasScope(caller, ['repo']));
  if (!visible || !named) {
    if (login === undefined) throw authenticationRequired();
    throw repositoryNotFound();
  }
  const { repository, owner, path } = named;
  if (access === 'read') return named;
  if (login === undefined) throw authenticationRequired();
  const pushScopes = repository.private ? ['repo'] : ['repo', 'public_repo'];
  if (!sameAsciiCaseless(login, owner.login) || !callerHasScope(caller, pushScopes))
    throw new HttpError(403, `Permission to ${owner.login}/${repository.name}.git denied to ${login}.`);
  await refuseWhileFollowing(named);
  return { repository, owner, path, pusher: login };
}

/**
 * 403 naming the cut-over while the repository follows its import's origin: every write, whatever
 * credential it comes with (a push, an LFS upload by the owner or by an action token issued
 * before following began), is refused until then.
 */
export async function refuseWhileFollowing({ owner, repository }: HostedRepository): Promise<void> {
  if (await followsOrigin(owner.login, repository.name))
    throw new HttpError(403, followingRefusal(owner.login, repository.name));
}

/** The smart-HTTP services, by the path that names them. */
export type SmartHttpService = '/info/refs' | '/git-upload-pack' | '/git-receive-pack';

export interface SmartHttpRequest {
  readonly service: SmartHttpService;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly contentType?: string | undefined;
  readonly contentEncoding?: string | undefined;
  readonly gitProtocol?: string | undefined;
  /** The request body as it arrives; `contentLength` when the client announced one. */
  readonly body: Readable;
  readonly contentLength?: number | undefined;
  /** Aborted when the client has gone. */
  readonly signal?: AbortSignal | undefined;
}

/** A smart-HTTP answer: status and headers, then the body as git writes it. */
export type SmartHttpResponse = Pick<BackendResponse, 'status' | 'headers' | 'body'>;

/** Which access a smart-HTTP request needs: pushing, and its ref advertisement, write. */
const accessFor = (request: SmartHttpRequest): Access =>
  request.service === '/git-receive-pack' ||
  (request.service === '/info/refs' && request.query.service === 'git-receive-pack')
    ? 'write'
    : 'read';

/** Git probes with a bare flush packet (`0000`) before a large push: nothing is pushed by it. */
const FLUSH_PACKET_BYTES = 4;

/**
 * Serves one smart-HTTP request of `{owner}/{repo}` for the caller, streamed both ways. A
 * repository never pushed to is served as an empty repository; its bare repository is made on the
 * owner's first push (or first LFS upload). A receive-pack that carried commands is recorded (`recordPush`) once git has
 * finished with it and before the response ends, so the client's push returns after the record;
 * stale quarantine directories are removed then.
 */
export async function serveSmartHttp(
  caller: Caller,
  ownerLogin: string,
  repoParam: string,
  request: SmartHttpRequest,
): Promise<SmartHttpResponse> {
  const hosted = await hostedRepository(caller, ownerLogin, repoParam, accessFor(request));
  let repositoryPath = hosted.path;
  if (hosted.pusher !== undefined) await ensureBareRepository(hosted.path, hosted.repository.defaultBranch);
  else if (!(await isBareRepository(hosted.path))) repositoryPath = await emptyRepositoryPath();
  const service = request.query.service;
  const response = await startHttpBackend({
    repositoryPath,
    method: request.service === '/info/refs' ? 'GET' : 'POST',
    service: request.service,
    query: service ? `service=${encodeURIComponent(service)}` : '',
    contentType: request.contentType,
    contentEncoding: request.contentEncoding,
    gitProtocol: request.gitProtocol,
    body: request.body,
    contentLength: request.contentLength,
    pusher: hosted.pusher,
    pushLimits: {
      maxFileBytes: config().largeFileBytes,
      maxPushBytes: config().gitMaxPushBytes,
      vendorTitle: vendorTitle(config().vendor),
    },
    signal: request.signal,
  });
  if (request.service !== '/git-receive-pack' || response.status !== 200) return response;
  const recorded = new Transform({
    transform: (chunk: Buffer, _encoding, done) => done(null, chunk),
    // The last bytes wait for the bookkeeping: git has exited, its refs are in place.
    flush: (done) => {
      response.finished
        .then(async ({ requestBytes }) => {
          if (requestBytes <= FLUSH_PACKET_BYTES) return;
          // What abandoned pushes left (see quarantine.ts) goes before the repository is measured.
          await removeStaleQuarantines(hosted.path);
          const stats = await repositoryStats(hosted.path);
          await recordPush(hosted.owner.login, hosted.repository.name, {
            size: stats.sizeKiB,
            hasContent: stats.hasContent,
          });
        })
        .then(() => done(), done);
    },
  });
  return { ...response, body: pipeline(response.body, recorded, () => undefined) };
}

/**
 * The front end task's leases on its pushes' quarantines (`#vcs/quarantine-leases`): started with
 * the task, which first removes what dead tasks' expired leases name.
 */
export const startPushLeases = (): Promise<QuarantineLeases> =>
  // Read now, not cached: the local stack starts the front end before it knows every URL.
  startQuarantineLeases(readConfig().repositoriesDir);
