import type { Repository } from '#domain/repositories';
import type { User } from '#domain/users';
import type { PublicUrls } from '#shared/urls';
import { repositoryNodeId } from './node-ids.ts';
import { simpleUserJson } from './user.ts';

/**
 * GitHub's repository shape (the description's `full-repository`, which `repository` is a subset
 * of), in GitHub's key order. Real values where the service has them: names, visibility, dates,
 * size, and `clone_url`, the hosted repository's smart-HTTP address on the web host. Features the
 * service does not have (issues, wiki, pages, forks, stars, watching, licences, language
 * detection) carry GitHub's values for a repository without them. `git_url` and `ssh_url` follow
 * GitHub's form on the web host; the service serves neither protocol (docs/decisions.md).
 */
export function repositoryJson(
  repository: Repository,
  owner: Pick<User, 'id' | 'login' | 'siteAdmin'>,
  urls: PublicUrls,
) {
  const fullName = `${owner.login}/${repository.name}`;
  const api = `${urls.api}/repos/${fullName}`;
  const web = `${urls.auth}/${fullName}`;
  const host = new URL(urls.auth).host;
  return {
    id: repository.id,
    node_id: repositoryNodeId(repository.id),
    name: repository.name,
    full_name: fullName,
    private: repository.private,
    owner: simpleUserJson(owner, urls),
    html_url: web,
    description: repository.description,
    fork: false,
    url: api,
    forks_url: `${api}/forks`,
    keys_url: `${api}/keys{/key_id}`,
    collaborators_url: `${api}/collaborators{/collaborator}`,
    teams_url: `${api}/teams`,
    hooks_url: `${api}/hooks`,
    issue_events_url: `${api}/issues/events{/number}`,
    events_url: `${api}/events`,
    assignees_url: `${api}/assignees{/user}`,
    branches_url: `${api}/branches{/branch}`,
    tags_url: `${api}/tags`,
    blobs_url: `${api}/git/blobs{/sha}`,
    git_tags_url: `${api}/git/tags{/sha}`,
    git_refs_url: `${api}/git/refs{/sha}`,
    trees_url: `${api}/git/trees{/sha}`,
    statuses_url: `${api}/statuses/{sha}`,
    languages_url: `${api}/languages`,
    stargazers_url: `${api}/stargazers`,
    contributors_url: `${api}/contributors`,
    subscribers_url: `${api}/subscribers`,
    subscription_url: `${api}/subscription`,
    commits_url: `${api}/commits{/sha}`,
    git_commits_url: `${api}/git/commits{/sha}`,
    comments_url: `${api}/comments{/number}`,
    issue_comment_url: `${api}/issues/comments{/number}`,
    contents_url: `${api}/contents/{+path}`,
    compare_url: `${api}/compare/{base}...{head}`,
    merges_url: `${api}/merges`,
    archive_url: `${api}/{archive_format}{/ref}`,
    downloads_url: `${api}/downloads`,
    issues_url: `${api}/issues{/number}`,
    pulls_url: `${api}/pulls{/number}`,
    milestones_url: `${api}/milestones{/number}`,
    notifications_url: `${api}/notifications{?since,all,participating}`,
    labels_url: `${api}/labels{/name}`,
    releases_url: `${api}/releases{/id}`,
    deployments_url: `${api}/deployments`,
    created_at: repository.createdAt,
    updated_at: repository.updatedAt,
    pushed_at: repository.pushedAt,
    git_url: `git://${host}/${fullName}.git`,
    ssh_url: `git@${host}:${fullName}.git`,
    clone_url: `${web}.git`,
    svn_url: web,
    homepage: repository.homepage,
    size: repository.size,
    stargazers_count: 0,
    watchers_count: 0,
    language: null,
    has_issues: false,
    has_projects: false,
    has_downloads: false,
    has_wiki: false,
    has_pages: false,
    forks_count: 0,
    mirror_url: null,
    archived: false,
    disabled: false,
    open_issues_count: 0,
    license: null,
    is_template: false,
    topics: [],
    visibility: repository.private ? 'private' : 'public',
    forks: 0,
    open_issues: 0,
    watchers: 0,
    default_branch: repository.defaultBranch,
    network_count: 0,
    subscribers_count: 0,
    import_url: `${api}/import`,
  };
}
