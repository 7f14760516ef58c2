import type { Repository } from './repositories.ts';
import type { User } from './users.ts';
import { MASKED_SECRET, type Webhook } from './webhooks.ts';

/*
 * GitHub's shapes a hook shows: the hook itself (the API's answers and the `ping` payload's
 * `hook`), and the `repository` and `sender` of event payloads. URLs come from the public roots
 * the hook was made under, so a delivery needs no request to know them.
 */

/** GitHub's `hook` shape; the secret shows as `********` when set. */
export function hookJson(hook: Webhook) {
  const url = `${hook.apiUrl}/repos/${hook.owner}/${hook.repo}/hooks/${hook.id}`;
  return {
    type: 'Repository',
    id: hook.id,
    name: 'web',
    active: hook.active,
    events: hook.events,
    config: {
      content_type: hook.contentType,
      insecure_ssl: hook.insecureSsl,
      url: hook.url,
      ...(hook.sealedSecret ? { secret: MASKED_SECRET } : {}),
    },
    updated_at: hook.updatedAt,
    created_at: hook.createdAt,
    url,
    test_url: `${url}/test`,
    ping_url: `${url}/pings`,
    deliveries_url: `${url}/deliveries`,
    last_response: hook.lastResponse,
  };
}

/** An event's `sender` (GitHub's simple user, the fields a receiver reads). */
export function senderJson(
  user: Pick<User, 'id' | 'login' | 'siteAdmin'>,
  hook: Pick<Webhook, 'apiUrl' | 'webUrl'>,
) {
  return {
    login: user.login,
    id: user.id,
    node_id: Buffer.from(`04:User${user.id}`).toString('base64'),
    avatar_url: `${hook.webUrl}/avatars/u/${user.id}`,
    gravatar_id: '',
    url: `${hook.apiUrl}/users/${user.login}`,
    html_url: `${hook.webUrl}/${user.login}`,
    type: 'User',
    site_admin: user.siteAdmin,
  };
}

/** An event's `repository`: identity, owner, visibility and addresses. */
export function repositoryPayload(
  repository: Repository,
  owner: Pick<User, 'id' | 'login' | 'siteAdmin'>,
  hook: Pick<Webhook, 'apiUrl' | 'webUrl'>,
) {
  const fullName = `${owner.login}/${repository.name}`;
  const api = `${hook.apiUrl}/repos/${fullName}`;
  return {
    id: repository.id,
    node_id: Buffer.from(`010:Repository${repository.id}`).toString('base64'),
    name: repository.name,
    full_name: fullName,
    private: repository.private,
    owner: senderJson(owner, hook),
    html_url: `${hook.webUrl}/${fullName}`,
    description: repository.description,
    fork: false,
    url: api,
    hooks_url: `${api}/hooks`,
    clone_url: `${hook.webUrl}/${fullName}.git`,
    created_at: repository.createdAt,
    updated_at: repository.updatedAt,
    pushed_at: repository.pushedAt,
    size: repository.size,
    default_branch: repository.defaultBranch,
  };
}

/** The outcome a `repository_import` event reports (GitHub's `status`). */
export type ImportOutcome = 'success' | 'failure' | 'cancelled';

/** GitHub's zen lines for `ping`. */
const ZEN = [
  'Design for failure.',
  'Keep it logically awesome.',
  'Non-blocking is better than blocking.',
  'Approachable is better than simple.',
  'Mind your words, they are important.',
  'Speak like a human.',
  'Favor focus over features.',
  'Avoid administrative distraction.',
  'Anything added dilutes everything else.',
  'Practicality beats purity.',
  'Responsive is better than fast.',
  'It’s not fully shipped until it’s fast.',
  'Half measures are as bad as nothing at all.',
  'Encourage flow.',
];

export const zenLine = (n: number): string => ZEN[n % ZEN.length] ?? ZEN[0] ?? '';
