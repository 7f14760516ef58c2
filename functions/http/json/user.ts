import { publicEmailOf, type User, type UserStats } from '#domain/users';
import type { PublicUrls } from '#shared/urls';
import { userNodeId } from './node-ids.ts';

/** GitHub's "simple user" shape (the `user` of check/reset, a repository's `owner`). */
export function simpleUserJson(user: Pick<User, 'id' | 'login' | 'siteAdmin'>, urls: PublicUrls) {
  const api = `${urls.api}/users/${user.login}`;
  return {
    login: user.login,
    id: user.id,
    node_id: userNodeId(user.id),
    avatar_url: `${urls.auth}/avatars/u/${user.id}`,
    gravatar_id: '',
    url: api,
    html_url: `${urls.auth}/${user.login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: 'User',
    site_admin: user.siteAdmin,
  };
}

/*
 * The larger shapes extend the smaller one with Object.assign, not an object spread: on Node 20,
 * `{ ...simpleUserJson(), name, … }` took about 60 µs per call (V8 gives each spread copy a fresh
 * map, so every property added after it makes a new transition), Object.assign well under 1 µs.
 * Keys keep the order they had (a key assigned again keeps its place).
 */

/**
 * GitHub's "public user": `GET /users/{login}`, to anyone. The email only when the user chose to
 * show it. Fields the service has no data for carry GitHub's values for an empty profile.
 */
export function userJson(user: User, urls: PublicUrls, stats: UserStats) {
  return Object.assign(simpleUserJson(user, urls), {
    name: user.name,
    company: null,
    blog: '',
    location: null,
    email: publicEmailOf(user),
    hireable: null,
    bio: null,
    twitter_username: null,
    public_repos: stats.publicRepos,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  });
}

/** GitHub's "private user": `GET /user`, the caller's own account, with their email and private counts. */
export function privateUserJson(user: User, urls: PublicUrls, stats: UserStats) {
  return Object.assign(userJson(user, urls, stats), {
    email: user.email,
    private_gists: 0,
    total_private_repos: stats.privateRepos,
    owned_private_repos: stats.privateRepos,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: stats.twoFactor,
  });
}
