import { GraphQLError } from 'graphql';
import { foldAsciiCase, sameAsciiCaseless } from '#domain/ascii-case';
import type { Repository } from '#domain/repositories';
import { publicEmailOf, type User } from '#domain/users';
import type { Caller } from '#services/authenticate';
import { visibleRepository } from '#services/repositories';
import { HttpError } from '#shared/errors';
import type { PublicUrls } from '#shared/urls';
import { matchesParamRule } from '#shared/validate';
import { repositoryNodeId, userNodeId } from '../json/node-ids.ts';

/** The caller of a GraphQL request: always a user (the route needs authentication). */
export type GraphqlCaller = Extract<Caller, { kind: 'user' }>;

/**
 * Repositories one request may look up (after aliases of the same one are merged): each is a
 * read, and a document of a thousand aliases must not be a thousand reads.
 */
export const MAX_REPOSITORY_LOOKUPS = 10;

/** A GraphQL error in GitHub's form: its `type` (`NOT_FOUND`, …) beside the message. */
const typedError = (type: string, message: string): GraphQLError =>
  new GraphQLError(message, { extensions: { type } });

function userObject(user: Pick<User, 'id' | 'login' | 'name' | 'email' | 'publicEmail'>, urls: PublicUrls) {
  return {
    __typename: 'User',
    id: userNodeId(user.id),
    databaseId: user.id,
    login: user.login,
    name: user.name,
    email: publicEmailOf(user) ?? '',
    url: `${urls.auth}/${user.login}`,
  };
}

function repositoryObject(repository: Repository, owner: User, caller: GraphqlCaller, urls: PublicUrls) {
  const nameWithOwner = `${owner.login}/${repository.name}`;
  const owned = sameAsciiCaseless(caller.user.login, owner.login);
  return {
    id: repositoryNodeId(repository.id),
    databaseId: repository.id,
    name: repository.name,
    nameWithOwner,
    owner: userObject(owner, urls),
    description: repository.description,
    url: `${urls.auth}/${nameWithOwner}`,
    isPrivate: repository.private,
    isFork: false,
    isEmpty: !repository.hasContent,
    visibility: repository.private ? 'PRIVATE' : 'PUBLIC',
    createdAt: repository.createdAt,
    pushedAt: repository.pushedAt,
    defaultBranchRef: repository.hasContent
      ? { name: repository.defaultBranch, prefix: 'refs/heads/' }
      : null,
    parent: null,
    viewerPermission: owned ? 'ADMIN' : 'READ',
    // The service has no issues, wiki, projects or pull requests (REST says the same: has_issues false, …).
    hasIssuesEnabled: false,
    hasWikiEnabled: false,
    hasProjectsEnabled: false,
    mergeCommitAllowed: false,
    rebaseMergeAllowed: false,
    squashMergeAllowed: false,
  };
}

/**
 * The root value of one request: `Query`'s fields, for this caller. A repository the caller may
 * not see is GitHub's `NOT_FOUND` error and a null, whether or not it exists (the REST rule of
 * `visibleRepository`: private ones only to their owner's tokens with `repo`).
 */
export function rootValue(caller: GraphqlCaller, urls: PublicUrls) {
  const lookups = new Map<string, Promise<ReturnType<typeof repositoryObject>>>();
  const lookUp = async (owner: string, name: string) => {
    const notFound = typedError(
      'NOT_FOUND',
      `Could not resolve to a Repository with the name '${owner}/${name}'.`,
    );
    if (!matchesParamRule('owner', owner) || !matchesParamRule('repo', name)) throw notFound;
    try {
      const { repository, owner: user } = await visibleRepository(caller, owner, name);
      return repositoryObject(repository, user, caller, urls);
    } catch (error) {
      throw error instanceof HttpError && error.status === 404 ? notFound : error;
    }
  };
  return {
    viewer: () => userObject(caller.user, urls),
    repository: ({ owner, name }: { owner: string; name: string }) => {
      const key = foldAsciiCase(`${owner}/${name}`);
      let found = lookups.get(key);
      if (!found) {
        if (lookups.size >= MAX_REPOSITORY_LOOKUPS)
          throw typedError(
            'MAX_NODE_LIMIT_EXCEEDED',
            `This query looks up more than ${MAX_REPOSITORY_LOOKUPS} repositories.`,
          );
        found = lookUp(owner, name);
        lookups.set(key, found);
      }
      return found;
    },
  };
}
