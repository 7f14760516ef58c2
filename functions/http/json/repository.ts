import type { Repository } from '#domain/repositories';
import type { User } from '#domain/users';
import type { PublicUrls } from '#shared/urls';
import { simpleUserJson } from './user.ts';

/** GitHub's repository shape, for the fields this service has. */
export function repositoryJson(
  repository: Repository,
  owner: Pick<User, 'id' | 'login' | 'siteAdmin'>,
  urls: PublicUrls,
) {
  const fullName = `${owner.login}/${repository.name}`;
  const api = `${urls.api}/repos/${fullName}`;
  const web = `${urls.auth}/${fullName}`;
  return {
    id: repository.id,
    node_id: Buffer.from(`010:Repository${repository.id}`).toString('base64'),
    name: repository.name,
    full_name: fullName,
    owner: simpleUserJson(owner, urls),
    private: repository.private,
    visibility: repository.private ? 'private' : 'public',
    html_url: web,
    description: repository.description,
    fork: false,
    url: api,
    clone_url: `${web}.git`,
    homepage: repository.homepage,
    default_branch: repository.defaultBranch,
    created_at: repository.createdAt,
    updated_at: repository.updatedAt,
    pushed_at: repository.pushedAt,
    import_url: `${api}/import`,
  };
}
