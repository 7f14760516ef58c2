import { buildSchema } from 'graphql';

/**
 * The GraphQL API's schema: a deliberately small subset of GitHub's, with GitHub's type and field
 * names, for what GitHub's own clients read when they sign in and clone (gh 2.23: `viewer { login }`
 * after `gh auth login` and in `gh auth status`, `repository(owner, name)` in `gh repo clone`).
 * Anything else is GraphQL's own validation error. Documented in docs/api.md ("The API root and GraphQL").
 */
export const SCHEMA_SDL = /* GraphQL */ `
  "An ISO-8601 encoded UTC date string."
  scalar DateTime
  "An RFC 3986, RFC 3987, and RFC 6570 (level 4) compliant URI string."
  scalar URI

  type Query {
    "The currently authenticated user."
    viewer: User!
    "Lookup a given repository by the owner and repository name."
    repository(owner: String!, name: String!): Repository
  }

  "Represents an owner of a Repository."
  interface RepositoryOwner {
    id: ID!
    login: String!
    url: URI!
  }

  "A user is an individual's account on GitHub that owns repositories and can make new content."
  type User implements RepositoryOwner {
    id: ID!
    databaseId: Int
    login: String!
    "The user's public profile name."
    name: String
    "The user's publicly visible profile email (empty when there is none)."
    email: String!
    url: URI!
  }

  "The access level to a repository."
  enum RepositoryPermission {
    ADMIN
    MAINTAIN
    WRITE
    TRIAGE
    READ
  }

  "The repository's visibility level."
  enum RepositoryVisibility {
    PRIVATE
    PUBLIC
    INTERNAL
  }

  "Represents a Git reference."
  type Ref {
    name: String!
    prefix: String!
  }

  "A repository contains the content for a project."
  type Repository {
    id: ID!
    databaseId: Int
    name: String!
    nameWithOwner: String!
    owner: RepositoryOwner!
    description: String
    url: URI!
    isPrivate: Boolean!
    isFork: Boolean!
    isEmpty: Boolean!
    visibility: RepositoryVisibility!
    createdAt: DateTime!
    pushedAt: DateTime
    "The Ref associated with the repository's default branch (null while the repository is empty)."
    defaultBranchRef: Ref
    "The repository this one was forked from: always null, the service has no forks."
    parent: Repository
    "The caller's permission level on the repository."
    viewerPermission: RepositoryPermission
    hasIssuesEnabled: Boolean!
    hasWikiEnabled: Boolean!
    hasProjectsEnabled: Boolean!
    mergeCommitAllowed: Boolean!
    rebaseMergeAllowed: Boolean!
    squashMergeAllowed: Boolean!
  }
`;

export const schema = buildSchema(SCHEMA_SDL);
