import type { DeployKey, UserKey } from '#domain/public-keys';
import type { PublicUrls } from '#shared/urls';

/** GitHub's shape of a user's SSH key (`/user/keys`). Keys are not verified by a challenge; GitHub says `true`. */
export function userKeyJson(key: UserKey, urls: PublicUrls) {
  return {
    id: key.id,
    key: key.key,
    url: `${urls.api}/user/keys/${key.id}`,
    title: key.title,
    created_at: key.createdAt,
    verified: true,
    read_only: false,
  };
}

/** GitHub's shape of a deploy key (`/repos/:owner/:repo/keys`). */
export function deployKeyJson(key: DeployKey, urls: PublicUrls) {
  return {
    id: key.id,
    key: key.key,
    url: `${urls.api}/repos/${key.owner}/${key.repo}/keys/${key.id}`,
    title: key.title,
    verified: true,
    created_at: key.createdAt,
    read_only: key.readOnly,
  };
}
