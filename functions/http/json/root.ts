import type { PublicUrls } from '#shared/urls';

/**
 * GitHub's API root (`meta/root`): URL templates, in GitHub's key order, for the resources this
 * service has. GitHub's other templates (search, gists, issues, notifications, organisations,
 * emojis, feeds, rate limit, …) name resources the service does not have, so they are left out
 * rather than pointing at 404s (docs/api.md, "Routes").
 */
export function rootJson(urls: PublicUrls) {
  return {
    current_user_url: `${urls.api}/user`,
    current_user_authorizations_html_url: `${urls.settings}/settings/connections/applications{/client_id}`,
    authorizations_url: `${urls.api}/authorizations`,
    keys_url: `${urls.api}/user/keys`,
    repository_url: `${urls.api}/repos/{owner}/{repo}`,
    current_user_repositories_url: `${urls.api}/user/repos`,
    user_url: `${urls.api}/users/{user}`,
  };
}
