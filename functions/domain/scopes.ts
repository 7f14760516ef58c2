/**
 * OAuth scopes (spec "Scopes" table). One relation, `IMPLIES`, drives both normalization (a scope
 * implied by another requested scope is dropped) and permission checks (a token with `repo` may do
 * what `public_repo` allows). Descriptions are what the consent and settings pages show.
 */
export const SCOPES = {
  user: 'Read/write access to profile info only; includes user:email and user:follow',
  'user:email': 'Read access to email addresses',
  'user:follow': 'Follow and unfollow users',
  public_repo:
    'Read/write access to code, commit statuses, collaborators and deployment statuses of public repositories and organizations; also needed to star public repositories',
  repo: 'Read/write access to code, commit statuses, invitations, collaborators, adding team memberships and deployment statuses of public and private repositories and organizations',
  repo_deployment: 'Access to deployment statuses of public and private repositories',
  'repo:status': 'Read/write access to commit statuses of public and private repositories',
  delete_repo: 'Delete adminable repositories',
  notifications: 'Read access to notifications',
  gist: 'Write access to gists',
  'read:repo_hook': 'Read and ping hooks in public or private repositories',
  'write:repo_hook': 'Read, write and ping hooks in public or private repositories',
  'admin:repo_hook': 'Read, write, ping and delete hooks in public or private repositories',
  'admin:org_hook': 'Read, write, ping and delete organization hooks',
  'read:org': 'Read-only access to organization, teams and membership',
  'write:org': 'Publicize and unpublicize organization membership',
  'admin:org': 'Fully manage organization, teams and memberships',
  'read:public_key': 'List and view public keys',
  'write:public_key': 'Create, list and view public keys',
  'admin:public_key': 'Fully manage public keys',
  'read:gpg_key': 'List and view GPG keys',
  'write:gpg_key': 'Create, list and view GPG keys',
  'admin:gpg_key': 'Fully manage GPG keys',
} as const;

export type Scope = keyof typeof SCOPES;

/** Direct implications; `impliedBy` below closes them transitively. */
const IMPLIES: Readonly<Partial<Record<Scope, readonly Scope[]>>> = {
  user: ['user:email', 'user:follow'],
  repo: ['public_repo', 'repo_deployment', 'repo:status', 'notifications'],
  'admin:repo_hook': ['write:repo_hook'],
  'write:repo_hook': ['read:repo_hook'],
  'admin:org': ['write:org'],
  'write:org': ['read:org'],
  'admin:public_key': ['write:public_key'],
  'write:public_key': ['read:public_key'],
  'admin:gpg_key': ['write:gpg_key'],
  'write:gpg_key': ['read:gpg_key'],
};

export const isScope = (value: string): value is Scope => Object.hasOwn(SCOPES, value);

/** Every scope `scope` grants, itself included. */
export function expand(scope: Scope): Set<Scope> {
  const out = new Set<Scope>([scope]);
  for (const implied of IMPLIES[scope] ?? []) for (const inner of expand(implied)) out.add(inner);
  return out;
}

/** The requested scopes that are not scopes at all, in request order, without repeats. */
export function invalidScopes(requested: readonly string[]): string[] {
  return [...new Set(requested.filter((scope) => !isScope(scope)))];
}

/**
 * Stored form: valid scopes, without repeats and without any scope another one implies, sorted
 * (`user, gist, user:email` → `gist, user`).
 */
export function normalizeScopes(requested: readonly Scope[]): Scope[] {
  const unique = [...new Set(requested)];
  return unique
    .filter((scope) => !unique.some((other) => other !== scope && expand(other).has(scope)))
    .sort();
}

/** True when the granted scopes include (directly or by implication) at least one of `accepted`. */
export function satisfies(granted: readonly string[], accepted: readonly string[]): boolean {
  if (accepted.length === 0) return true;
  const have = new Set<string>();
  for (const scope of granted) if (isScope(scope)) for (const inner of expand(scope)) have.add(inner);
  return accepted.some((scope) => have.has(scope));
}

/** Scopes as the `X-OAuth-Scopes` headers write them: `repo, user`. */
export const scopeHeader = (scopes: readonly string[]): string => scopes.join(', ');
