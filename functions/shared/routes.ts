/**
 * The route table: the one list of endpoints. It drives the API Gateway resources and Lambda
 * functions in `lib/cdk`, the local server's router, the route table in docs/api.md and the test that
 * checks they all agree. Plain data only, so CDK code can import it without loading handler code.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * How a route authenticates its caller.
 * - `none`: anonymous; credentials, when sent, are still checked and a bad one is 401.
 * - `lfs-action`: as `none`, or `Authorization: RemoteAuth <token>` with a token an LFS batch
 *   answer handed out for this route's repository, operation and object (the LFS object routes).
 * - `password`: HTTP Basic with the user's login and password (plus OTP); tokens are refused.
 * - `user`: a user, by password or by OAuth token.
 * - `app`: HTTP Basic with an OAuth application's client_id and client_secret.
 * - `web`: a browser page; the session cookie, if any, says who is signed in (pages that need a
 *   user redirect to the login page themselves). API credentials are not read.
 * - `client`: the OAuth token endpoint (and revocation, introspection), which authenticates the
 *   client itself and answers in OAuth's error format.
 * - `public`: a public document (the OAuth server metadata); no credentials are read at all.
 * - `bearer`: a user's OAuth or personal token in `Authorization: Bearer` only (the MCP endpoint);
 *   no password, no token in the query string.
 */
export type AuthKind =
  | 'none'
  | 'lfs-action'
  | 'password'
  | 'user'
  | 'app'
  | 'web'
  | 'client'
  | 'public'
  | 'bearer';

/**
 * What the response body is: GitHub JSON, an HTML page, an OAuth response (the token endpoint's
 * form/JSON/XML, the standard endpoints' JSON), or Git's own protocols (smart HTTP and the Git LFS
 * API, binary bodies), or MCP's JSON-RPC messages (the MCP endpoint, Streamable HTTP).
 */
export type MediaKind = 'json' | 'html' | 'oauth' | 'git' | 'mcp';

/**
 * What a route's function reaches besides the table: the hosted repositories' file system (EFS in
 * AWS), the import workflow (Step Functions) and the Git LFS object store (the S3 bucket it
 * presigns URLs for; `services/lfs-objects.ts`) and `webhooks`: invoking the webhook delivery
 * function asynchronously (`services/webhook-events.ts`) and sealing hook secrets;
 * `import-credentials`: opening an import's sealed origin credentials (a batch made from a waiting
 * import seals them again for each new import). CDK grants exactly these.
 */
export type Capability =
  | 'repositories'
  | 'import-workflow'
  | 'import-credentials'
  | 'lfs-objects'
  | 'webhooks';

/**
 * Where a route is served. `api`: API Gateway invokes the route's own zip Lambda function
 * (`functions/http/<handler>.ts`), within API Gateway's and Lambda's limits and without git on the
 * PATH. `git-frontend`: the Git front end (`functions/git-server/`, a container service with git
 * behind the load balancer, reached under the web origin by path), which streams bodies of any
 * size; its `handler` names an entry of `functions/git-server/handlers.ts`.
 */
export type ServedBy = 'api' | 'git-frontend';

export interface Route {
  readonly method: HttpMethod;
  /** Full request path in API Gateway syntax: `/api/v3/users/{login}`. */
  readonly path: string;
  /**
   * Handler module under `functions/http/`, without extension (for the Git front end's routes, its
   * entry in `functions/git-server/handlers.ts`); also the route's stable id.
   */
  readonly handler: string;
  readonly auth: AuthKind;
  /** Scopes the action accepts (`X-Accepted-OAuth-Scopes`); empty means any token will do. */
  readonly scopes: readonly string[];
  readonly media: MediaKind;
  /** Least-privilege table access for the route's Lambda function. */
  readonly table: 'RO' | 'RW';
  /** Preview media type the Accept header must name (e.g. `barred-rock`). */
  readonly preview?: string;
  /** Resources beyond the table (none when absent). */
  readonly uses?: readonly Capability[];
  /** `api` when absent. */
  readonly servedBy?: ServedBy;
  /**
   * Readable from any origin without credentials (`Access-Control-Allow-Origin: *`), its CORS
   * preflight answered in front of the function (`shared/cors.ts`): the OAuth endpoints
   * browser-based public clients call.
   */
  readonly cors?: true;
}

const API = '/api/v3';
/**
 * The not-found page's own path: `-` cannot begin a login, so no `/{owner}` page can ever be here.
 * The web origin's viewer-request function rewrites GETs no row serves to it (decision 0135).
 */
export const NOT_FOUND_PAGE_PATH = '/-/not-found';
/** GraphQL's endpoint, beside the REST API's root as on GitHub Enterprise Server. */
export const GRAPHQL_PATH = '/api/graphql';
/** The MCP endpoint (issue 38), on the web origin: `{webUrl}/mcp`. */
export const MCP_PATH = '/mcp'; // the same as `#domain/resources` MCP_PATH (a unit test keeps them one)

// biome-ignore format: one line per route keeps the table readable
export const ROUTES: readonly Route[] = [
  // The API root, GitHub's `meta/root` at `{base_url}/` (API Gateway routes the trailing slash here).
  { method: 'GET', path: API, handler: 'meta/root', auth: 'none', scopes: [], media: 'json', table: 'RO' },
  // GraphQL where GitHub Enterprise Server serves it: the small schema of services/graphql-schema.ts.
  { method: 'POST', path: GRAPHQL_PATH, handler: 'graphql/query', auth: 'user', scopes: [], media: 'json', table: 'RO' },
  { method: 'GET', path: `${API}/user`, handler: 'users/get-authenticated', auth: 'user', scopes: [], media: 'json', table: 'RO' },
  // This service's extension (issue 38): the person's own security log; `user` (profile) scope, as it shows addresses.
  { method: 'GET', path: `${API}/user/security-log`, handler: 'users/security-log', auth: 'user', scopes: ['user'], media: 'json', table: 'RO' },
  { method: 'GET', path: `${API}/users/{login}`, handler: 'users/get-by-login', auth: 'none', scopes: [], media: 'json', table: 'RO' },
  { method: 'POST', path: `${API}/user/repos`, handler: 'repos/create-for-user', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW' },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}`, handler: 'repos/get', auth: 'none', scopes: [], media: 'json', table: 'RO' },
  // The MCP endpoint (issue 38): Streamable HTTP, stateless. Its tools mirror the import routes (functions/http/mcp/tools/), so its function has their capabilities;
  // each tool checks the scopes of the row it mirrors. No stream and no session to end: GET and DELETE are 405.
  { method: 'POST', path: MCP_PATH, handler: 'mcp/endpoint', auth: 'bearer', scopes: [], media: 'mcp', table: 'RW', uses: ['import-workflow', 'import-credentials', 'webhooks'] },
  { method: 'GET', path: MCP_PATH, handler: 'mcp/no-stream', auth: 'public', scopes: [], media: 'mcp', table: 'RO' },
  { method: 'DELETE', path: MCP_PATH, handler: 'mcp/no-session', auth: 'public', scopes: [], media: 'mcp', table: 'RO' },

  // Grants and authorizations: Basic with login and password only (spec §5.1).
  { method: 'GET', path: `${API}/applications/grants`, handler: 'grants/list', auth: 'password', scopes: [], media: 'json', table: 'RO' },
  { method: 'GET', path: `${API}/applications/grants/{grant_id}`, handler: 'grants/get', auth: 'password', scopes: [], media: 'json', table: 'RO' },
  { method: 'DELETE', path: `${API}/applications/grants/{grant_id}`, handler: 'grants/delete', auth: 'password', scopes: [], media: 'json', table: 'RW' },
  { method: 'GET', path: `${API}/authorizations`, handler: 'authorizations/list', auth: 'password', scopes: [], media: 'json', table: 'RO' },
  { method: 'GET', path: `${API}/authorizations/{authorization_id}`, handler: 'authorizations/get', auth: 'password', scopes: [], media: 'json', table: 'RO' },
  { method: 'POST', path: `${API}/authorizations`, handler: 'authorizations/create', auth: 'password', scopes: [], media: 'json', table: 'RW' },
  { method: 'PUT', path: `${API}/authorizations/clients/{client_id}`, handler: 'authorizations/get-or-create', auth: 'password', scopes: [], media: 'json', table: 'RW' },
  { method: 'PUT', path: `${API}/authorizations/clients/{client_id}/{fingerprint}`, handler: 'authorizations/get-or-create-with-fingerprint', auth: 'password', scopes: [], media: 'json', table: 'RW' },
  { method: 'PATCH', path: `${API}/authorizations/{authorization_id}`, handler: 'authorizations/update', auth: 'password', scopes: [], media: 'json', table: 'RW' },
  { method: 'DELETE', path: `${API}/authorizations/{authorization_id}`, handler: 'authorizations/delete', auth: 'password', scopes: [], media: 'json', table: 'RW' },

  // Application side: Basic with client_id and client_secret (spec §5.2).
  { method: 'GET', path: `${API}/applications/{client_id}/tokens/{access_token}`, handler: 'applications/check-token', auth: 'app', scopes: [], media: 'json', table: 'RO' },
  { method: 'POST', path: `${API}/applications/{client_id}/tokens/{access_token}`, handler: 'applications/reset-token', auth: 'app', scopes: [], media: 'json', table: 'RW' },
  { method: 'DELETE', path: `${API}/applications/{client_id}/tokens/{access_token}`, handler: 'applications/revoke-token', auth: 'app', scopes: [], media: 'json', table: 'RW' },
  { method: 'DELETE', path: `${API}/applications/{client_id}/grants/{access_token}`, handler: 'applications/revoke-grant', auth: 'app', scopes: [], media: 'json', table: 'RW' },
  // The same four with the token in the body (GitHub 2020): `{"access_token": "…"}`.
  { method: 'POST', path: `${API}/applications/{client_id}/token`, handler: 'applications/token-check', auth: 'app', scopes: [], media: 'json', table: 'RO' },
  { method: 'PATCH', path: `${API}/applications/{client_id}/token`, handler: 'applications/token-reset', auth: 'app', scopes: [], media: 'json', table: 'RW' },
  { method: 'DELETE', path: `${API}/applications/{client_id}/token`, handler: 'applications/token-delete', auth: 'app', scopes: [], media: 'json', table: 'RW' },
  { method: 'DELETE', path: `${API}/applications/{client_id}/grant`, handler: 'applications/grant-delete', auth: 'app', scopes: [], media: 'json', table: 'RW' },

  // Credential revocation (GitHub 2025): anyone reports leaked tokens, without authenticating.
  { method: 'POST', path: `${API}/credentials/revoke`, handler: 'credentials/revoke', auth: 'none', scopes: [], media: 'json', table: 'RW' },

  // SSH keys and deploy keys
  { method: 'GET', path: `${API}/user/keys`, handler: 'keys/list-for-user', auth: 'user', scopes: ['read:public_key', 'write:public_key', 'admin:public_key'], media: 'json', table: 'RO' },
  { method: 'POST', path: `${API}/user/keys`, handler: 'keys/create-for-user', auth: 'user', scopes: ['write:public_key', 'admin:public_key'], media: 'json', table: 'RW' },
  { method: 'GET', path: `${API}/user/keys/{key_id}`, handler: 'keys/get-for-user', auth: 'user', scopes: ['read:public_key', 'write:public_key', 'admin:public_key'], media: 'json', table: 'RO' },
  { method: 'DELETE', path: `${API}/user/keys/{key_id}`, handler: 'keys/delete-for-user', auth: 'user', scopes: ['admin:public_key'], media: 'json', table: 'RW' },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/keys`, handler: 'deploy-keys/list', auth: 'user', scopes: ['repo'], media: 'json', table: 'RO' },
  { method: 'POST', path: `${API}/repos/{owner}/{repo}/keys`, handler: 'deploy-keys/create', auth: 'user', scopes: ['repo'], media: 'json', table: 'RW' },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/keys/{key_id}`, handler: 'deploy-keys/get', auth: 'user', scopes: ['repo'], media: 'json', table: 'RO' },
  { method: 'DELETE', path: `${API}/repos/{owner}/{repo}/keys/{key_id}`, handler: 'deploy-keys/delete', auth: 'user', scopes: ['repo'], media: 'json', table: 'RW' },

  // Repository webhooks (issue 28), owner only; the hook scopes as GitHub documents them (each implies the ones below it), or `repo`.
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/hooks`, handler: 'hooks/list', auth: 'user', scopes: ['read:repo_hook', 'repo'], media: 'json', table: 'RO' },
  { method: 'POST', path: `${API}/repos/{owner}/{repo}/hooks`, handler: 'hooks/create', auth: 'user', scopes: ['write:repo_hook', 'repo'], media: 'json', table: 'RW', uses: ['webhooks'] },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/hooks/{hook_id}`, handler: 'hooks/get', auth: 'user', scopes: ['read:repo_hook', 'repo'], media: 'json', table: 'RO' },
  { method: 'PATCH', path: `${API}/repos/{owner}/{repo}/hooks/{hook_id}`, handler: 'hooks/update', auth: 'user', scopes: ['write:repo_hook', 'repo'], media: 'json', table: 'RW', uses: ['webhooks'] },
  { method: 'DELETE', path: `${API}/repos/{owner}/{repo}/hooks/{hook_id}`, handler: 'hooks/delete', auth: 'user', scopes: ['admin:repo_hook', 'repo'], media: 'json', table: 'RW' },
  { method: 'POST', path: `${API}/repos/{owner}/{repo}/hooks/{hook_id}/pings`, handler: 'hooks/ping', auth: 'user', scopes: ['read:repo_hook', 'repo'], media: 'json', table: 'RO', uses: ['webhooks'] },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/hooks/{hook_id}/deliveries`, handler: 'hooks/list-deliveries', auth: 'user', scopes: ['read:repo_hook', 'repo'], media: 'json', table: 'RO' },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}`, handler: 'hooks/get-delivery', auth: 'user', scopes: ['read:repo_hook', 'repo'], media: 'json', table: 'RO' },
  { method: 'POST', path: `${API}/repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts`, handler: 'hooks/redeliver', auth: 'user', scopes: ['write:repo_hook', 'repo'], media: 'json', table: 'RO', uses: ['webhooks'] },

  // Web pages: sign-in (OAuth web flow, spec §4.4).
  { method: 'GET', path: '/login', handler: 'pages/login-form', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/login', handler: 'pages/login', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'GET', path: '/login/two-factor', handler: 'pages/two-factor-form', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/login/two-factor', handler: 'pages/two-factor', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'GET', path: '/signup', handler: 'pages/signup-form', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/signup', handler: 'pages/signup', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/logout', handler: 'pages/logout', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  // Where a person starts (issue 37): their repositories and imports; signed out, sign in or sign up.
  { method: 'GET', path: '/', handler: 'pages/home', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  // The 404 page: the web origin's viewer-request function sends every GET no row serves here (decision 0135).
  { method: 'GET', path: NOT_FOUND_PAGE_PATH, handler: 'pages/not-found', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  // The import form (issue 37): a new repository and its import; its script checks names with the JSON answer of `name-check`.
  { method: 'GET', path: '/new/import', handler: 'new-import/form', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/new/import', handler: 'new-import/create', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
  { method: 'GET', path: '/new/import/name', handler: 'new-import/name-check', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  // Settings pages (spec §5.3, §5.7)
  { method: 'GET', path: '/settings/connections/applications', handler: 'settings/applications', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'GET', path: '/settings/connections/applications/{client_id}', handler: 'settings/application', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/settings/connections/applications/{client_id}/revoke', handler: 'settings/application-revoke', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'GET', path: '/settings/tokens', handler: 'settings/tokens', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/settings/tokens', handler: 'settings/token-create', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/settings/tokens/{authorization_id}/regenerate', handler: 'settings/token-regenerate', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/settings/tokens/{authorization_id}/delete', handler: 'settings/token-delete', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'GET', path: '/settings/security-log', handler: 'settings/security-log', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'GET', path: '/settings/developers', handler: 'settings/developers', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/settings/developers', handler: 'settings/developer-app-create', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'GET', path: '/settings/developers/{client_id}', handler: 'settings/developer-app', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/settings/developers/{client_id}/secret', handler: 'settings/developer-app-secret', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/settings/developers/{client_id}/token-expiration', handler: 'settings/developer-app-token-expiration', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/settings/developers/{client_id}/device-flow', handler: 'settings/developer-app-device-flow', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/settings/developers/{client_id}/authorizations/{authorization_id}/revoke', handler: 'settings/developer-token-revoke', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  // OAuth web flow (spec §4.4)
  { method: 'GET', path: '/login/oauth/authorize', handler: 'oauth/authorize', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/login/oauth/authorize', handler: 'oauth/authorize-decision', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/login/oauth/access_token', handler: 'oauth/access-token', auth: 'client', scopes: [], media: 'oauth', table: 'RW', cors: true },
  // Standard OAuth endpoints (RFC 8414 metadata, RFC 7009 revocation, RFC 7662 introspection)
  { method: 'GET', path: '/.well-known/oauth-authorization-server', handler: 'oauth/metadata', auth: 'public', scopes: [], media: 'oauth', table: 'RO', cors: true },
  // RFC 9728 protected resource metadata of the MCP endpoint and of the REST API (issue 38).
  { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp', handler: 'oauth/resource-mcp', auth: 'public', scopes: [], media: 'oauth', table: 'RO', cors: true },
  { method: 'GET', path: '/.well-known/oauth-protected-resource/api/v3', handler: 'oauth/resource-api', auth: 'public', scopes: [], media: 'oauth', table: 'RO', cors: true },
  // RFC 7591 dynamic client registration, 404 until an administrator turns it on (issue 38).
  { method: 'POST', path: '/login/oauth/register', handler: 'oauth/register', auth: 'public', scopes: [], media: 'oauth', table: 'RW', cors: true },
  { method: 'POST', path: '/login/oauth/revoke', handler: 'oauth/revoke', auth: 'client', scopes: [], media: 'oauth', table: 'RW', cors: true },
  { method: 'POST', path: '/login/oauth/introspect', handler: 'oauth/introspect', auth: 'client', scopes: [], media: 'oauth', table: 'RO' },
  // Device authorization grant (RFC 8628, as GitHub): codes for a public client, the page the user enters the code on.
  { method: 'POST', path: '/login/device/code', handler: 'oauth/device-code', auth: 'client', scopes: [], media: 'oauth', table: 'RW', cors: true },
  { method: 'GET', path: '/login/device', handler: 'oauth/device', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/login/device', handler: 'oauth/device-verify', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/login/device/authorize', handler: 'oauth/device-decision', auth: 'web', scopes: [], media: 'html', table: 'RW' },

  // Source import API (spec §4.5): preview media type barred-rock.
  // (import API rows)
  // Owner only (GitHub required push access); a private repository needs `repo`. The spec's
  // prefix-less LFS and large-file paths are served too (spec README); owners named like the
  // API's own top-level segments (`user`, `users`, `repos`, …) are shadowed there, as on GitHub, where those names are reserved.
  { method: 'PUT', path: `${API}/repos/{owner}/{repo}/import`, handler: 'imports/start', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow'] },
  // RW and the workflow: a read finds an execution that ended without a word (import-interrupted.ts).
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/import`, handler: 'imports/get', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow', 'webhooks'] },
  { method: 'PATCH', path: `${API}/repos/{owner}/{repo}/import`, handler: 'imports/update', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow'] },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/import/authors`, handler: 'imports/list-authors', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RO', preview: 'barred-rock' },
  // Authors files (issue 37): an extension, not in GitHub's API.
  { method: 'PUT', path: `${API}/repos/{owner}/{repo}/import/authors`, handler: 'imports/apply-authors-file', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow'] },
  { method: 'PATCH', path: `${API}/repos/{owner}/{repo}/import/authors/{author_id}`, handler: 'imports/map-author', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow'] },
  { method: 'PATCH', path: `${API}/repos/{owner}/{repo}/import/lfs`, handler: 'imports/set-lfs', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow'] },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/import/large_files`, handler: 'imports/list-large-files', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RO', preview: 'barred-rock' },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/import/revisions`, handler: 'imports/list-revisions', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RO', preview: 'barred-rock' },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/import/revisions/{origin_revision}`, handler: 'imports/get-revision', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RO', preview: 'barred-rock' },
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/import/report`, handler: 'imports/get-report', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RO', preview: 'barred-rock' },
  // Following the origin until cut-over (issue 27): extensions, not in GitHub's API.
  { method: 'GET', path: `${API}/repos/{owner}/{repo}/import/sync`, handler: 'imports/get-sync', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RO', preview: 'barred-rock' },
  { method: 'PUT', path: `${API}/repos/{owner}/{repo}/import/sync`, handler: 'imports/follow', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock' },
  { method: 'POST', path: `${API}/repos/{owner}/{repo}/import/sync`, handler: 'imports/sync-now', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow'] },
  { method: 'DELETE', path: `${API}/repos/{owner}/{repo}/import/sync`, handler: 'imports/cut-over', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock' },
  // Batches of imports (issue 37, an extension): many projects at once, each an ordinary import.
  { method: 'POST', path: `${API}/user/import-batches`, handler: 'import-batches/create', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow', 'import-credentials'] },
  { method: 'GET', path: `${API}/user/import-batches`, handler: 'import-batches/list', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RO', preview: 'barred-rock' },
  { method: 'GET', path: `${API}/user/import-batches/{batch_id}`, handler: 'import-batches/get', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RO', preview: 'barred-rock' },
  { method: 'DELETE', path: `${API}/user/import-batches/{batch_id}`, handler: 'import-batches/cancel', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow', 'repositories', 'webhooks'] },
  { method: 'PUT', path: `${API}/user/import-batches/{batch_id}/sync`, handler: 'import-batches/follow', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock' },
  { method: 'POST', path: `${API}/user/import-batches/{batch_id}/sync`, handler: 'import-batches/sync-now', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow'] },
  { method: 'DELETE', path: `${API}/user/import-batches/{batch_id}/sync`, handler: 'import-batches/cut-over', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock' },
  { method: 'PUT', path: `${API}/user/import-batches/{batch_id}/authors`, handler: 'import-batches/authors', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow'] },
  { method: 'PATCH', path: `${API}/{owner}/{repo}/import/lfs`, handler: 'imports/set-lfs-short-path', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow'] },
  { method: 'GET', path: `${API}/{owner}/{repo}/import/large_files`, handler: 'imports/list-large-files-short-path', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RO', preview: 'barred-rock' },
  { method: 'DELETE', path: `${API}/repos/{owner}/{repo}/import`, handler: 'imports/cancel', auth: 'user', scopes: ['public_repo', 'repo'], media: 'json', table: 'RW', preview: 'barred-rock', uses: ['import-workflow', 'repositories', 'webhooks'] },

  // Hosted repositories: Git smart HTTP and the Git LFS API at {web}/{owner}/{repo}.git.
  // (hosted repository rows)
  // `{repo}` carries `name.git`; the services require and strip the suffix (anything else is 404).
  // Served by the Git front end: packs and LFS objects of any size, streamed, with git at hand.
  { method: 'GET', path: '/{owner}/{repo}/info/refs', handler: 'git/info-refs', auth: 'none', scopes: [], media: 'git', table: 'RO', uses: ['repositories'], servedBy: 'git-frontend' },
  { method: 'POST', path: '/{owner}/{repo}/git-upload-pack', handler: 'git/upload-pack', auth: 'none', scopes: [], media: 'git', table: 'RO', uses: ['repositories'], servedBy: 'git-frontend' },
  { method: 'POST', path: '/{owner}/{repo}/git-receive-pack', handler: 'git/receive-pack', auth: 'none', scopes: [], media: 'git', table: 'RW', uses: ['repositories'], servedBy: 'git-frontend' },
  { method: 'POST', path: '/{owner}/{repo}/info/lfs/objects/batch', handler: 'git/lfs-batch', auth: 'none', scopes: [], media: 'git', table: 'RO', uses: ['repositories', 'lfs-objects'], servedBy: 'git-frontend' },
  { method: 'GET', path: '/{owner}/{repo}/info/lfs/objects/{oid}', handler: 'git/lfs-download', auth: 'lfs-action', scopes: [], media: 'git', table: 'RO', uses: ['repositories'], servedBy: 'git-frontend' },
  { method: 'PUT', path: '/{owner}/{repo}/info/lfs/objects/{oid}', handler: 'git/lfs-upload', auth: 'lfs-action', scopes: [], media: 'git', table: 'RO', uses: ['repositories'], servedBy: 'git-frontend' },

  // Import progress pages at {import_url}/{owner}/{repo}/import.
  // (progress page rows)
  { method: 'GET', path: '/{owner}/{repo}/import', handler: 'import-page/progress', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/{owner}/{repo}/import/authors', handler: 'import-page/authors-file', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
  { method: 'GET', path: '/{owner}/{repo}/import/authors-file', handler: 'import-page/authors-download', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/{owner}/{repo}/import/authors/{author_id}', handler: 'import-page/map-author', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
  { method: 'POST', path: '/{owner}/{repo}/import/lfs', handler: 'import-page/lfs-choice', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
  { method: 'POST', path: '/{owner}/{repo}/import/credentials', handler: 'import-page/credentials', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
  { method: 'POST', path: '/{owner}/{repo}/import/project', handler: 'import-page/project-choice', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
  // Several projects at once from the project choice (issue 37): a batch made from this import.
  { method: 'POST', path: '/{owner}/{repo}/import/batch', handler: 'import-page/batch-choice', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow', 'import-credentials'] },
  { method: 'POST', path: '/{owner}/{repo}/import/cancel', handler: 'import-page/cancel', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow', 'repositories', 'webhooks'] },
  { method: 'GET', path: '/{owner}/{repo}/import/revisions.csv', handler: 'import-page/revisions-csv', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/{owner}/{repo}/import/restart', handler: 'import-page/restart', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
  // Following the origin (issue 27): the page's forms for PUT, POST and DELETE …/import/sync.
  { method: 'POST', path: '/{owner}/{repo}/import/follow', handler: 'import-page/follow', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/{owner}/{repo}/import/sync', handler: 'import-page/sync-now', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
  { method: 'POST', path: '/{owner}/{repo}/import/cut-over', handler: 'import-page/cut-over', auth: 'web', scopes: [], media: 'html', table: 'RW' },

  // Batch dashboards (issue 37): the owner's batches, one page per batch, and its actions on all of its imports.
  // Static segments win over `/{owner}/{repo}/…` (as in API Gateway), so a user named `imports` has no progress page for a repository `batches`.
  { method: 'GET', path: '/imports/batches', handler: 'batch-page/list', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'GET', path: '/imports/batches/{batch_id}', handler: 'batch-page/dashboard', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'GET', path: '/imports/batches/{batch_id}/revisions.csv', handler: 'batch-page/revisions-csv', auth: 'web', scopes: [], media: 'html', table: 'RO' },
  { method: 'POST', path: '/imports/batches/{batch_id}/follow', handler: 'batch-page/follow', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/imports/batches/{batch_id}/sync', handler: 'batch-page/sync-now', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
  { method: 'POST', path: '/imports/batches/{batch_id}/cut-over', handler: 'batch-page/cut-over', auth: 'web', scopes: [], media: 'html', table: 'RW' },
  { method: 'POST', path: '/imports/batches/{batch_id}/authors', handler: 'batch-page/authors', auth: 'web', scopes: [], media: 'html', table: 'RW', uses: ['import-workflow'] },
];

/**
 * What a path parameter may look like. The stack checks every parameter of a request against its
 * rule before authentication and before any database read, and answers anything else with what
 * GitHub answers for a path that names nothing: 404 `Not Found`.
 */
export interface ParamRule {
  readonly pattern: RegExp;
  /** Also a safe integer (numeric ids). */
  readonly safeInteger?: true;
}

/** GitHub's login rule: 1-39 ASCII letters and digits, hyphens only between two of them. */
const LOGIN: ParamRule = { pattern: /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/ };
const ID: ParamRule = { pattern: /^[1-9][0-9]{0,15}$/, safeInteger: true };

/** One rule per parameter name used in `ROUTES`; the route-table test fails on a name without one. */
export const PATH_PARAMETERS: Readonly<Record<string, ParamRule>> = {
  login: LOGIN,
  owner: LOGIN,
  /** GitHub's repository name rule: 1-100 of letters, digits, `.`, `-`, `_`. */
  repo: { pattern: /^[A-Za-z0-9._-]{1,100}$/ },
  /**
   * 20 characters, as `newClientId` makes them (and GitHub's OAuth apps have), or a client
   * metadata document's URL (issue 38; at most 255 characters, `isClientIdUrl`).
   */
  client_id: { pattern: /^(?:[0-9A-Za-z]{20}|https?:\/\/[!-~]{1,247})$/ },
  /** Tokens are 40 characters; older or foreign ones are still only printable ASCII. */
  access_token: { pattern: /^[!-~]{1,255}$/ },
  /** A client's own string, as long as the body's `fingerprint` may be (UTF-16 units, no controls). */
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  fingerprint: { pattern: /^[^\u0000-\u001f\u007f]{1,255}$/ },
  grant_id: ID,
  authorization_id: ID,
  key_id: ID,
  /** A Git LFS object id: any segment here; the LFS API checks it (`isLfsOid`) and answers 422. */
  oid: { pattern: /^[\s\S]{1,1024}$/ },
  author_id: ID,
  hook_id: ID,
  delivery_id: ID,
  batch_id: ID,
  /** An origin's own revision name; the service answers 404 for any it cannot hold (`isOriginRevisionName`). */
  origin_revision: { pattern: /^[\s\S]{1,255}$/ },
};

/** The `{name}`s in a route's path. */
export const pathParameterNames = (path: string): string[] =>
  [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');

/** The API root path; the REST API's `{base_url}` ends with it. */
export const API_PREFIX = API;

/** A stable, CloudFormation-safe name for a route's function: `users/get-by-login` → `UsersGetByLogin`. */
export function routeId(route: Pick<Route, 'handler'>): string {
  return route.handler
    .split(/[/-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** Where a route is served (`api` unless its row says otherwise). */
export const servedBy = (route: Pick<Route, 'servedBy'>): ServedBy => route.servedBy ?? 'api';

/** Routes an OAuth token may call; their functions record the token's last use. */
export const acceptsTokens = (route: Pick<Route, 'auth'>): boolean =>
  route.auth === 'user' || route.auth === 'none' || route.auth === 'lfs-action' || route.auth === 'bearer';

/** Handlers that check a password or one-time code (`services/sign-in.ts`) besides the Basic-auth routes. */
const SIGN_IN_PAGES: readonly string[] = ['pages/login', 'pages/two-factor'];

/**
 * Whether a route's function may check a user's password or one-time code: every route that reads
 * HTTP Basic credentials of a user, and the web sign-in pages. Those functions reserve login
 * attempts and open sealed TOTP seeds.
 */
export const signsIn = (route: Pick<Route, 'auth' | 'handler'>): boolean =>
  route.auth === 'none' ||
  route.auth === 'lfs-action' ||
  route.auth === 'password' ||
  route.auth === 'user' ||
  SIGN_IN_PAGES.includes(route.handler);

/** The route a handler module serves; throws at cold start if the table has no such row. */
export function routeFor(handler: string): Route {
  const route = ROUTES.find((candidate) => candidate.handler === handler);
  if (!route) throw new Error(`No route in the route table for handler ${handler}`);
  return route;
}

/**
 * The path of the route a handler module serves, with its `{parameters}` filled in (encoded): the
 * one way pages and redirects name each other, so a path changes in the table alone.
 */
export function pathTo(handler: string, params: Readonly<Record<string, string | number>> = {}): string {
  return routeFor(handler).path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`pathTo(${handler}): no value for {${name}}`);
    return encodeURIComponent(String(value));
  });
}

const BY_REQUEST = new Map(ROUTES.map((route) => [`${route.method} ${route.path}`, route]));

/**
 * The route an API Gateway proxy event was sent to, by its method and resource template (the local
 * server fills both the same way). Handlers never name their own route: each function serves one
 * route, and the event says which.
 */
export function routeOf(event: { readonly httpMethod: string; readonly resource: string }): Route {
  const route = BY_REQUEST.get(`${event.httpMethod} ${event.resource}`);
  if (!route) throw new Error(`No route in the route table for ${event.httpMethod} ${event.resource}`);
  return route;
}
