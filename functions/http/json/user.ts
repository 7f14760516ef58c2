import type { User } from '#domain/users';
import type { PublicUrls } from '#shared/urls';

/** GitHub's "simple user" shape (the `user` of check/reset, a repository's `owner`). */
export function simpleUserJson(user: Pick<User, 'id' | 'login' | 'siteAdmin'>, urls: PublicUrls) {
  const api = `${urls.api}/users/${user.login}`;
  return {
    login: user.login,
    id: user.id,
    node_id: Buffer.from(`04:User${user.id}`).toString('base64'),
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

/** The full user of `GET /user` and `GET /users/:login`. */
export function userJson(user: User, urls: PublicUrls) {
  return {
    ...simpleUserJson(user, urls),
    name: user.name,
    email: user.email,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  };
}
