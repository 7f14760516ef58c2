import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getImport, listAuthors } from '#data/imports/items';
import { addAuthors, enterStatus } from '#data/imports/progress';
import { storeRevisionMap } from '#data/imports/revision-map';
import { FINDING_KINDS } from '#domain/import-report';
import { API_PREFIX, ROUTES } from '#shared/routes';
import { createApp, createUser, enableOtp } from '#test/fixtures';
import { deviationsFrom } from '#test/github-openapi';
import { generateSshKey } from '#test/ssh-keys';
import { json, startTestStack } from '#test/stack';

/**
 * Every JSON route's responses, success and the main errors, checked against the schema of the
 * same operation in GitHub's published description (`@octokit/openapi` 2.2.1, api.github.com),
 * so clients generated from that description work against this service unchanged.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type User = Awaited<ReturnType<typeof createUser>>;
let stack: Stack;
let octocat: User;
let hubot: User;
let app: Awaited<ReturnType<typeof createApp>>;

/** Route-table keys (`GET /users/{login}`, without the API prefix) with a validated success. */
const validated = new Set<string>();
const deviations: string[] = [];

/** The REST API's JSON routes (GraphQL, beside it, is not in GitHub's REST description). */
const REST_JSON = ROUTES.filter(
  (route) => route.media === 'json' && (route.path === API_PREFIX || route.path.startsWith(`${API_PREFIX}/`)),
);
/** `GET /users/{login}`; the API root is GitHub's `GET /`. */
const restPath = (path: string) => path.slice(API_PREFIX.length) || '/';
const JSON_ROUTES = REST_JSON.map((route) => `${route.method} ${restPath(route.path)}`);

/** Operations whose bodies carry a documented subset of the described fields (README, "Routes"). */
const SUBSETS: ReadonlySet<string> = new Set(['GET /']);

/** The sync resource's fields (README, "Following the origin"). */
const SYNC_FIELDS = [
  'url',
  'import_url',
  'state',
  'interval_minutes',
  'following_since',
  'last_synced_at',
  'last_checked_at',
  'next_sync_at',
  'origin_revision',
  'last_sync',
  'cut_over_at',
  'keep_refs_deleted_while_following',
  'keep_deleted_refs',
];

/** GitHub's `hook-delivery-item` fields (README, "Webhooks"). */
const DELIVERY_ITEM_FIELDS = [
  'id',
  'guid',
  'delivered_at',
  'redelivery',
  'duration',
  'status',
  'status_code',
  'event',
  'action',
  'installation_id',
  'repository_id',
];

/** A batch's fields without its entries (docs/importing.md, "Many projects at once"). */
const BATCH_FIELDS = [
  'id',
  'url',
  'html_url',
  'owner',
  'total',
  'queued',
  'running',
  'concurrency',
  'from_import',
  'has_credentials',
  'use_lfs',
  'keep_empty_directories',
  'keep_refs_deleted_in_history',
  'keep_deleted_refs',
  'private',
  'following',
  'created_at',
  'updated_at',
];

/**
 * Extensions GitHub does not describe: their errors are checked as those of the GitHub operation
 * named (same access rules), their successes by the fields docs/api.md documents.
 */
const EXTENSIONS: Record<
  string,
  {
    readonly errorsAs: string;
    readonly fields: readonly string[];
    /** A success whose body is that of this GitHub operation (its 200 schema). */
    readonly successAs?: string;
    /** The success is a list, each of its items with the fields. */
    readonly list?: boolean;
  }
> = {
  // GitHub's 2025 credential revocation API, newer than the description: 202 with `{}`.
  'POST /credentials/revoke': { errorsAs: '/authorizations', fields: [] },
  'GET /repos/{owner}/{repo}/import/report': {
    errorsAs: '/repos/{owner}/{repo}/import',
    fields: [
      'status',
      'choices',
      ...FINDING_KINDS.flatMap((kind) => [`${kind}_count`, kind]),
      'large_files_action',
      'large_files_count',
      'large_files_size',
      'large_files',
    ],
  },
  ...Object.fromEntries(
    ['GET', 'PUT', 'DELETE'].map((method) => [
      `${method} /repos/{owner}/{repo}/import/sync`,
      { errorsAs: '/repos/{owner}/{repo}/import', fields: SYNC_FIELDS },
    ]),
  ),
  // The revision map (issue 27): a list of entries, and one entry.
  'GET /repos/{owner}/{repo}/import/revisions': {
    errorsAs: '/repos/{owner}/{repo}/import',
    fields: ['origin_revision', 'commit'],
    list: true,
  },
  'GET /repos/{owner}/{repo}/import/revisions/{origin_revision}': {
    errorsAs: '/repos/{owner}/{repo}/import',
    fields: ['origin_revision', 'commit'],
  },
  // Webhook deliveries (GitHub 2021, newer than the description): GitHub's hook-delivery-item and hook-delivery.
  'GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries': {
    errorsAs: 'GET /repos/{owner}/{repo}/hooks/{hook_id}',
    fields: [...DELIVERY_ITEM_FIELDS, 'throttled_at'],
    list: true,
  },
  'GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}': {
    errorsAs: 'GET /repos/{owner}/{repo}/hooks/{hook_id}',
    fields: [...DELIVERY_ITEM_FIELDS, 'url', 'request', 'response'],
  },
  'POST /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts': {
    errorsAs: 'POST /repos/{owner}/{repo}/hooks/{hook_id}/pings',
    fields: [],
  },
  // Authors files (issue 37): the answer lists GitHub's import authors.
  'PUT /repos/{owner}/{repo}/import/authors': {
    errorsAs: 'PATCH /repos/{owner}/{repo}/import/authors/{author_id}',
    fields: ['format', 'rewriting', 'changed', 'mapped', 'not_in_history', 'not_in_file', 'import_url'],
  },
  // Import batches (issue 37): the batch, its entries, and what an action on all did to each.
  ...Object.fromEntries(
    [
      ['POST /user/import-batches', [...BATCH_FIELDS, 'imports']],
      ['GET /user/import-batches/{batch_id}', [...BATCH_FIELDS, 'imports']],
      ['DELETE /user/import-batches/{batch_id}', [...BATCH_FIELDS, 'imports', 'outcomes']],
      ['PUT /user/import-batches/{batch_id}/sync', [...BATCH_FIELDS, 'imports', 'outcomes']],
      ['POST /user/import-batches/{batch_id}/sync', [...BATCH_FIELDS, 'imports', 'outcomes']],
      ['DELETE /user/import-batches/{batch_id}/sync', [...BATCH_FIELDS, 'imports', 'outcomes']],
    ].map(([route, fields]) => [route, { errorsAs: 'GET /user', fields }]),
  ),
  'GET /user/import-batches': { errorsAs: 'GET /user', fields: BATCH_FIELDS, list: true },
  // A batch's authors file errors as one import's.
  'PUT /user/import-batches/{batch_id}/authors': {
    errorsAs: 'PATCH /repos/{owner}/{repo}/import/authors/{author_id}',
    fields: [...BATCH_FIELDS, 'imports', 'format', 'not_in_any_history', 'outcomes'],
  },
  // The security log (issue 38): audit-log-style entries; errors as GET /user's.
  'GET /user/security-log': {
    errorsAs: 'GET /user',
    fields: [
      'id',
      'action',
      'user',
      'actor',
      'actor_type',
      'actor_application',
      'actor_ip',
      'user_agent',
      'created_at',
      '@timestamp',
      'token',
      'application',
      'repository',
      'author',
      'count',
      'detail',
    ],
    list: true,
  },
  // Sync now answers the import itself.
  'POST /repos/{owner}/{repo}/import/sync': {
    errorsAs: 'PUT /repos/{owner}/{repo}/import',
    fields: [],
    successAs: 'GET /repos/{owner}/{repo}/import',
  },
};

function extensionDeviations(route: string, status: number, body: unknown): string[] {
  const extension = EXTENSIONS[route];
  if (!extension) return [];
  if (status >= 300) {
    // `errorsAs` is a path (same method) or `METHOD path`.
    const [method, path] = extension.errorsAs.includes(' ')
      ? extension.errorsAs.split(' ')
      : [route.split(' ')[0], extension.errorsAs];
    return deviationsFrom(method ?? '', path ?? '', status, body);
  }
  if (extension.successAs) {
    const [method = '', path = ''] = extension.successAs.split(' ');
    return deviationsFrom(method, path, 200, body);
  }
  const items: object[] = extension.list ? (body as object[]) : [body as object];
  const unknown = [...new Set(items.flatMap((item) => Object.keys(item)))].filter(
    (key) => !extension.fields.includes(key),
  );
  return unknown.length === 0 ? [] : [`${route} → ${status}: undocumented fields ${unknown.join(', ')}`];
}

interface Call {
  readonly auth?: string;
  readonly body?: unknown;
}

/**
 * Sends `method url` and checks the answer against the operation of route `route` (its path as in
 * the route table): the status must be `status`, the JSON body must match the described schema.
 */
async function call(route: string, url: string, status: number, options: Call = {}) {
  if (!JSON_ROUTES.includes(route)) throw new Error(`${route} is not a JSON route of the route table`);
  const [method = '', tablePath = ''] = route.split(' ');
  // The spec's prefix-less import paths are GitHub's `/repos/…` operations.
  const path = tablePath.startsWith('/{owner}/') ? `/repos${tablePath}` : tablePath;
  const preview = REST_JSON.find(
    (row) => `${row.method} ${restPath(row.path)}` === `${method} ${tablePath}`,
  )?.preview;
  const response = await fetch(`${stack.baseUrl}${url}`, {
    method,
    headers: {
      ...(options.auth ? { Authorization: options.auth } : {}),
      ...(preview ? { Accept: `application/vnd.github.${preview}-preview+json` } : {}),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the schema
  const body: any = text === '' ? undefined : JSON.parse(text);
  expect(response.status, `${method} ${url}: ${text}`).toBe(status);
  deviations.push(
    ...(route in EXTENSIONS
      ? extensionDeviations(route, status, body)
      : deviationsFrom(method, path, status, body, { subset: SUBSETS.has(route) })),
  );
  if (status < 300) validated.add(route);
  return body;
}

/** Fails the test with every deviation collected so far, one line each. */
function expectConformance() {
  const found = deviations.splice(0);
  expect(found.join('\n'), 'responses that deviate from GitHub’s OpenAPI description').toBe('');
}

beforeAll(async () => {
  stack = await startTestStack({
    importStateMachine: {
      name: 'Import',
      definitionFile: fileURLToPath(new URL('../fixtures/import-idle.asl.json', import.meta.url)),
      tasks: {},
    },
  });
  [octocat, hubot] = await Promise.all([
    createUser(stack.endpointsFile, 'octocat'),
    createUser(stack.endpointsFile, 'hubot'),
  ]);
  app = await createApp(stack.endpointsFile, 'hubot', 'Shape App');
});
afterAll(async () => {
  await stack?.stop();
});

describe('users', () => {
  it('GET /user and GET /users/{login} match private-user / public-user', async () => {
    await call('GET /user', '/user', 200, { auth: octocat.auth });
    await call('GET /user', '/user', 401);
    await call('GET /users/{login}', '/users/octocat', 200);
    await call('GET /users/{login}', '/users/octocat', 200, { auth: hubot.auth });
    await call('GET /users/{login}', '/users/nobody-here', 404);
    expectConformance();
  });
});

describe('the API root', () => {
  it('GET / matches root: the templates of the resources the service has, each as described', async () => {
    const root = await call('GET /', '/', 200);
    await call('GET /', '/', 200, { auth: octocat.auth });
    await call('GET /', '/', 401, { auth: 'token ghp_000000000000000000000000000000000000' });
    expect(Object.keys(root)).toContain('current_user_url');
    expectConformance();
  });
});

describe('repositories', () => {
  it('POST /user/repos matches repository; GET /repos/{owner}/{repo} matches full-repository', async () => {
    await call('POST /user/repos', '/user/repos', 201, {
      auth: octocat.auth,
      body: { name: 'shapes', description: 'Shapes', homepage: 'https://shapes.example' },
    });
    await call('POST /user/repos', '/user/repos', 201, {
      auth: octocat.auth,
      body: { name: 'secret-shapes', private: true },
    });
    await call('POST /user/repos', '/user/repos', 422, { auth: octocat.auth, body: { name: 'shapes' } });
    await call('POST /user/repos', '/user/repos', 401, { body: { name: 'anonymous' } });
    await call('GET /repos/{owner}/{repo}', '/repos/octocat/shapes', 200);
    await call('GET /repos/{owner}/{repo}', '/repos/octocat/secret-shapes', 200, { auth: octocat.auth });
    await call('GET /repos/{owner}/{repo}', '/repos/octocat/secret-shapes', 404);
    expectConformance();
  });
});

describe('values the service knows', () => {
  it('repositories: clone_url is the hosted clone address; a new repository was pushed when created and is empty', async () => {
    const repository = await call('GET /repos/{owner}/{repo}', '/repos/octocat/shapes', 200);
    expect(repository).toMatchObject({
      clone_url: `${stack.webUrl}/octocat/shapes.git`,
      html_url: `${stack.webUrl}/octocat/shapes`,
      pushed_at: repository.created_at,
      size: 0,
      visibility: 'public',
    });
    expectConformance();
  });

  it('users: repository counts from the owner’s repositories; two-factor as configured', async () => {
    const own = await call('GET /user', '/user', 200, { auth: octocat.auth });
    expect(own).toMatchObject({
      public_repos: 1,
      total_private_repos: 1,
      owned_private_repos: 1,
      two_factor_authentication: false,
    });
    const seen = await call('GET /users/{login}', '/users/octocat', 200);
    expect(seen.public_repos).toBe(1);
    expect(seen).not.toHaveProperty('total_private_repos');
    expect(seen).not.toHaveProperty('two_factor_authentication');

    const guarded = await createUser(stack.endpointsFile, 'guarded');
    const otp = await enableOtp(stack.endpointsFile, 'guarded');
    const response = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: guarded.auth, 'X-GitHub-OTP': otp.code() },
    });
    expect((await json(response)).two_factor_authentication).toBe(true);
    expectConformance();
  });
});

describe('authorizations and grants', () => {
  it('every /authorizations and /applications/grants operation matches authorization / application-grant', async () => {
    const created = await call('POST /authorizations', '/authorizations', 201, {
      auth: octocat.auth,
      body: { scopes: ['repo'], note: 'shapes', note_url: 'https://shapes.example' },
    });
    await call('POST /authorizations', '/authorizations', 422, { auth: octocat.auth, body: { scopes: [] } });
    await call('POST /authorizations', '/authorizations', 401, { body: { note: 'x' } });
    await call('GET /authorizations', '/authorizations', 200, { auth: octocat.auth });
    await call('GET /authorizations/{authorization_id}', `/authorizations/${created.id}`, 200, {
      auth: octocat.auth,
    });
    await call('GET /authorizations/{authorization_id}', '/authorizations/999999', 404, {
      auth: octocat.auth,
    });
    await call('PATCH /authorizations/{authorization_id}', `/authorizations/${created.id}`, 200, {
      auth: octocat.auth,
      body: { add_scopes: ['gist'] },
    });
    await call('PATCH /authorizations/{authorization_id}', `/authorizations/${created.id}`, 422, {
      auth: octocat.auth,
      body: { scopes: ['no-such-scope'] },
    });

    const forApp = { client_secret: app.clientSecret, scopes: ['user'], note: 'app' };
    const appToken = await call(
      'PUT /authorizations/clients/{client_id}',
      `/authorizations/clients/${app.clientId}`,
      201,
      { auth: octocat.auth, body: forApp },
    );
    await call('PUT /authorizations/clients/{client_id}', `/authorizations/clients/${app.clientId}`, 200, {
      auth: octocat.auth,
      body: forApp,
    });
    await call('PUT /authorizations/clients/{client_id}', `/authorizations/clients/${app.clientId}`, 422, {
      auth: octocat.auth,
      body: {},
    });
    await call(
      'PUT /authorizations/clients/{client_id}/{fingerprint}',
      `/authorizations/clients/${app.clientId}/laptop`,
      201,
      { auth: octocat.auth, body: forApp },
    );
    await call(
      'PUT /authorizations/clients/{client_id}/{fingerprint}',
      `/authorizations/clients/${app.clientId}/laptop`,
      200,
      { auth: octocat.auth, body: forApp },
    );
    await call(
      'PUT /authorizations/clients/{client_id}/{fingerprint}',
      `/authorizations/clients/${app.clientId}/laptop`,
      422,
      { auth: octocat.auth, body: {} },
    );

    const grants = await call('GET /applications/grants', '/applications/grants', 200, {
      auth: octocat.auth,
    });
    const grantId = grants[0]?.id;
    await call('GET /applications/grants/{grant_id}', `/applications/grants/${grantId}`, 200, {
      auth: octocat.auth,
    });
    await call('GET /applications/grants/{grant_id}', '/applications/grants/999999', 404, {
      auth: octocat.auth,
    });

    // Application side, on the app's own token.
    const tokens = `/applications/${app.clientId}/tokens`;
    await call('GET /applications/{client_id}/tokens/{access_token}', `${tokens}/${appToken.token}`, 200, {
      auth: app.basic,
    });
    await call(
      'GET /applications/{client_id}/tokens/{access_token}',
      `${tokens}/gho_${'x'.repeat(36)}`,
      404,
      {
        auth: app.basic,
      },
    );
    const reset = await call(
      'POST /applications/{client_id}/tokens/{access_token}',
      `${tokens}/${appToken.token}`,
      200,
      { auth: app.basic },
    );
    await call('POST /applications/{client_id}/tokens/{access_token}', `${tokens}/${appToken.token}`, 404, {
      auth: app.basic,
    });
    await call('DELETE /applications/{client_id}/tokens/{access_token}', `${tokens}/${reset.token}`, 204, {
      auth: app.basic,
    });
    await call('DELETE /applications/{client_id}/tokens/{access_token}', `${tokens}/${reset.token}`, 404, {
      auth: app.basic,
    });
    const again = await call(
      'PUT /authorizations/clients/{client_id}',
      `/authorizations/clients/${app.clientId}`,
      201,
      { auth: octocat.auth, body: forApp },
    );
    const grantsUrl = `/applications/${app.clientId}/grants`;
    await call('DELETE /applications/{client_id}/grants/{access_token}', `${grantsUrl}/${again.token}`, 204, {
      auth: app.basic,
    });
    await call('DELETE /applications/{client_id}/grants/{access_token}', `${grantsUrl}/${again.token}`, 404, {
      auth: app.basic,
    });

    // The same four with the token in the body (GitHub 2020).
    const inBody = await call(
      'PUT /authorizations/clients/{client_id}',
      `/authorizations/clients/${app.clientId}`,
      201,
      { auth: octocat.auth, body: forApp },
    );
    const token = `/applications/${app.clientId}/token`;
    const grant = `/applications/${app.clientId}/grant`;
    const withToken = (access_token: string) => ({ auth: app.basic, body: { access_token } });
    await call('POST /applications/{client_id}/token', token, 200, withToken(inBody.token));
    await call('POST /applications/{client_id}/token', token, 404, withToken(`gho_${'x'.repeat(36)}`));
    await call('POST /applications/{client_id}/token', token, 422, { auth: app.basic, body: {} });
    const resetInBody = await call(
      'PATCH /applications/{client_id}/token',
      token,
      200,
      withToken(inBody.token),
    );
    await call('PATCH /applications/{client_id}/token', token, 404, withToken(inBody.token));
    await call('PATCH /applications/{client_id}/token', token, 422, {
      auth: app.basic,
      body: { access_token: 1 },
    });
    await call('DELETE /applications/{client_id}/token', token, 204, withToken(resetInBody.token));
    await call('DELETE /applications/{client_id}/token', token, 404, withToken(resetInBody.token));
    await call('DELETE /applications/{client_id}/token', token, 422, { auth: app.basic, body: {} });
    const grantInBody = await call(
      'PUT /authorizations/clients/{client_id}',
      `/authorizations/clients/${app.clientId}`,
      201,
      { auth: octocat.auth, body: forApp },
    );
    await call('DELETE /applications/{client_id}/grant', grant, 204, withToken(grantInBody.token));
    await call('DELETE /applications/{client_id}/grant', grant, 404, withToken(grantInBody.token));
    await call('DELETE /applications/{client_id}/grant', grant, 422, { auth: app.basic, body: {} });

    await call('DELETE /authorizations/{authorization_id}', `/authorizations/${created.id}`, 204, {
      auth: octocat.auth,
    });
    await call('DELETE /authorizations/{authorization_id}', `/authorizations/${created.id}`, 404, {
      auth: octocat.auth,
    });
    await call('PUT /authorizations/clients/{client_id}', `/authorizations/clients/${app.clientId}`, 201, {
      auth: octocat.auth,
      body: forApp,
    });
    const left = await call('GET /applications/grants', '/applications/grants', 200, { auth: octocat.auth });
    await call('DELETE /applications/grants/{grant_id}', `/applications/grants/${left[0]?.id}`, 204, {
      auth: octocat.auth,
    });
    await call('DELETE /applications/grants/{grant_id}', '/applications/grants/999999', 404, {
      auth: octocat.auth,
    });
    expectConformance();
  });
});

describe('SSH keys and deploy keys', () => {
  it('/user/keys matches key; /repos/{owner}/{repo}/keys matches deploy-key', async () => {
    const key = await call('POST /user/keys', '/user/keys', 201, {
      auth: hubot.auth,
      body: { title: 'Laptop', key: generateSshKey('ed25519').line },
    });
    await call('POST /user/keys', '/user/keys', 422, {
      auth: hubot.auth,
      body: { title: 'x', key: 'nonsense' },
    });
    await call('GET /user/keys', '/user/keys', 200, { auth: hubot.auth });
    await call('GET /user/keys', '/user/keys', 401);
    await call('GET /user/keys/{key_id}', `/user/keys/${key.id}`, 200, { auth: hubot.auth });
    await call('GET /user/keys/{key_id}', '/user/keys/999999', 404, { auth: hubot.auth });
    await call('DELETE /user/keys/{key_id}', `/user/keys/${key.id}`, 204, { auth: hubot.auth });
    await call('DELETE /user/keys/{key_id}', `/user/keys/${key.id}`, 404, { auth: hubot.auth });

    await call('POST /user/repos', '/user/repos', 201, { auth: hubot.auth, body: { name: 'deploy' } });
    const keys = '/repos/hubot/deploy/keys';
    const deployKey = await call('POST /repos/{owner}/{repo}/keys', keys, 201, {
      auth: hubot.auth,
      body: { title: 'CI', key: generateSshKey('ed25519').line, read_only: true },
    });
    await call('POST /repos/{owner}/{repo}/keys', keys, 422, { auth: hubot.auth, body: { title: 'x' } });
    await call('GET /repos/{owner}/{repo}/keys', keys, 200, { auth: hubot.auth });
    await call('GET /repos/{owner}/{repo}/keys', '/repos/hubot/nothing/keys', 404, { auth: hubot.auth });
    await call('GET /repos/{owner}/{repo}/keys/{key_id}', `${keys}/${deployKey.id}`, 200, {
      auth: hubot.auth,
    });
    await call('GET /repos/{owner}/{repo}/keys/{key_id}', `${keys}/999999`, 404, { auth: hubot.auth });
    await call('DELETE /repos/{owner}/{repo}/keys/{key_id}', `${keys}/${deployKey.id}`, 204, {
      auth: hubot.auth,
    });
    await call('DELETE /repos/{owner}/{repo}/keys/{key_id}', `${keys}/${deployKey.id}`, 404, {
      auth: hubot.auth,
    });
    expectConformance();
  });
});

describe('webhooks', () => {
  it('/repos/{owner}/{repo}/hooks matches hook; deliveries match hook-delivery(-item)', async () => {
    await call('POST /user/repos', '/user/repos', 201, { auth: hubot.auth, body: { name: 'hooked' } });
    const hooks = '/repos/hubot/hooked/hooks';
    // Port 9 (discard) refuses at once: the ping's delivery is recorded as failed, quickly.
    const hook = await call('POST /repos/{owner}/{repo}/hooks', hooks, 201, {
      auth: hubot.auth,
      body: {
        config: { url: 'http://127.0.0.1:9/hook', content_type: 'json', secret: 's3cret' },
        events: ['repository_import'],
      },
    });
    await call('POST /repos/{owner}/{repo}/hooks', hooks, 422, { auth: hubot.auth, body: { config: {} } });
    await call('POST /repos/{owner}/{repo}/hooks', hooks, 404, {
      auth: octocat.auth,
      body: { config: { url: 'http://127.0.0.1:9/' } },
    });
    await call('GET /repos/{owner}/{repo}/hooks', hooks, 200, { auth: hubot.auth });
    await call('GET /repos/{owner}/{repo}/hooks/{hook_id}', `${hooks}/${hook.id}`, 200, { auth: hubot.auth });
    await call('GET /repos/{owner}/{repo}/hooks/{hook_id}', `${hooks}/999999`, 404, { auth: hubot.auth });
    await call('PATCH /repos/{owner}/{repo}/hooks/{hook_id}', `${hooks}/${hook.id}`, 200, {
      auth: hubot.auth,
      body: { add_events: ['push'], active: true },
    });
    await call('PATCH /repos/{owner}/{repo}/hooks/{hook_id}', `${hooks}/${hook.id}`, 422, {
      auth: hubot.auth,
      body: { config: { url: 'http://169.254.169.254/' } },
    });
    await call('POST /repos/{owner}/{repo}/hooks/{hook_id}/pings', `${hooks}/${hook.id}/pings`, 204, {
      auth: hubot.auth,
    });
    const deliveries = `${hooks}/${hook.id}/deliveries`;
    let listed: { id: number }[] = [];
    for (let tries = 0; listed.length === 0 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      listed = await call('GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries', deliveries, 200, {
        auth: hubot.auth,
      });
    }
    const first = listed[0]?.id ?? 0;
    await call('GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries', `${deliveries}?per_page=1`, 200, {
      auth: hubot.auth,
    });
    await call('GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries', `${deliveries}?cursor=nonsense`, 422, {
      auth: hubot.auth,
    });
    await call(
      'GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}',
      `${deliveries}/${first}`,
      200,
      {
        auth: hubot.auth,
      },
    );
    await call(
      'GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}',
      `${deliveries}/999999`,
      404,
      {
        auth: hubot.auth,
      },
    );
    await call(
      'POST /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts',
      `${deliveries}/${first}/attempts`,
      202,
      { auth: hubot.auth },
    );
    await call('DELETE /repos/{owner}/{repo}/hooks/{hook_id}', `${hooks}/${hook.id}`, 204, {
      auth: hubot.auth,
    });
    await call('DELETE /repos/{owner}/{repo}/hooks/{hook_id}', `${hooks}/${hook.id}`, 404, {
      auth: hubot.auth,
    });
    expectConformance();
  });
});

describe('source imports', () => {
  it('every import operation matches import / porter-author / porter-large-file', async () => {
    await call('POST /user/repos', '/user/repos', 201, { auth: octocat.auth, body: { name: 'imported' } });
    const base = '/repos/octocat/imported/import';
    const start = { vcs_url: 'http://127.0.0.1:9/origin.git', vcs: 'git' };
    await call('GET /repos/{owner}/{repo}/import', base, 404, { auth: octocat.auth });
    await call('PUT /repos/{owner}/{repo}/import', base, 422, { auth: octocat.auth, body: { vcs: 'git' } });
    await call('PUT /repos/{owner}/{repo}/import', '/repos/octocat/nothing/import', 404, {
      auth: octocat.auth,
      body: start,
    });
    await call('PUT /repos/{owner}/{repo}/import', base, 201, { auth: octocat.auth, body: start });
    await call('GET /repos/{owner}/{repo}/import', base, 200, { auth: octocat.auth });
    await call('PATCH /repos/{owner}/{repo}/import', base, 200, { auth: octocat.auth, body: {} });
    await call('PATCH /repos/{owner}/{repo}/import', base, 422, {
      auth: octocat.auth,
      body: { vcs_username: 'me', vcs_password: 'pw' },
    });

    const record = await getImport('octocat', 'imported');
    if (!record) throw new Error('no import');
    await addAuthors('octocat', 'imported', record.importId, record.attempt, [
      { remoteId: 'Ann <ann@x>', remoteName: 'Ann', email: 'ann@x', name: 'Ann' },
    ]);
    const [author] = await listAuthors('octocat', 'imported', record.importId);
    await call('GET /repos/{owner}/{repo}/import/authors', `${base}/authors`, 200, { auth: octocat.auth });
    await call('GET /repos/{owner}/{repo}/import/authors', '/repos/octocat/nothing/import/authors', 404, {
      auth: octocat.auth,
    });
    const authorUrl = `${base}/authors/${author?.id}`;
    await call('PATCH /repos/{owner}/{repo}/import/authors/{author_id}', authorUrl, 200, {
      auth: octocat.auth,
      body: { name: 'Ann Example', email: 'ann@example.com' },
    });
    await call('PATCH /repos/{owner}/{repo}/import/authors/{author_id}', authorUrl, 422, {
      auth: octocat.auth,
      body: { email: 'nope' },
    });
    await call('PATCH /repos/{owner}/{repo}/import/authors/{author_id}', `${base}/authors/999999`, 404, {
      auth: octocat.auth,
      body: { name: 'x' },
    });
    await call('PATCH /repos/{owner}/{repo}/import/lfs', `${base}/lfs`, 200, {
      auth: octocat.auth,
      body: { use_lfs: 'opt_in' },
    });
    await call('PATCH /repos/{owner}/{repo}/import/lfs', `${base}/lfs`, 422, {
      auth: octocat.auth,
      body: { use_lfs: 'maybe' },
    });
    await call('PATCH /{owner}/{repo}/import/lfs', '/octocat/imported/import/lfs', 200, {
      auth: octocat.auth,
      body: { use_lfs: 'opt_out' },
    });
    await call('GET /repos/{owner}/{repo}/import/large_files', `${base}/large_files`, 200, {
      auth: octocat.auth,
    });
    await call('GET /{owner}/{repo}/import/large_files', '/octocat/imported/import/large_files', 200, {
      auth: octocat.auth,
    });
    await call('GET /repos/{owner}/{repo}/import/report', `${base}/report`, 200, { auth: octocat.auth });
    await call('DELETE /repos/{owner}/{repo}/import', base, 204, { auth: octocat.auth });
    await call('DELETE /repos/{owner}/{repo}/import', base, 404, { auth: octocat.auth });
    await call('GET /repos/{owner}/{repo}/import/report', `${base}/report`, 404, { auth: octocat.auth });
    expectConformance();
  });
});

describe('following the origin', () => {
  it('the sync resource answers its documented fields, and errors as the import does', async () => {
    await call('POST /user/repos', '/user/repos', 201, { auth: octocat.auth, body: { name: 'followed' } });
    const base = '/repos/octocat/followed/import';
    const start = { vcs_url: 'http://127.0.0.1:9/origin.git', vcs: 'git' };
    await call('GET /repos/{owner}/{repo}/import/sync', `${base}/sync`, 404, { auth: octocat.auth });
    await call('PUT /repos/{owner}/{repo}/import', base, 201, { auth: octocat.auth, body: start });
    await call('GET /repos/{owner}/{repo}/import/sync', `${base}/sync`, 200, { auth: octocat.auth });
    await call('PUT /repos/{owner}/{repo}/import/sync', `${base}/sync`, 422, {
      auth: octocat.auth,
      body: { interval_minutes: 60 },
    });
    const record = await getImport('octocat', 'followed');
    if (!record) throw new Error('no import');
    await enterStatus('octocat', 'followed', record.attempt, 'complete');
    await call('PUT /repos/{owner}/{repo}/import/sync', `${base}/sync`, 200, {
      auth: octocat.auth,
      body: { interval_minutes: 60 },
    });
    await call('POST /repos/{owner}/{repo}/import/sync', `${base}/sync`, 202, { auth: octocat.auth });
    // The cut-over waits for the sync attempt to end (409 meanwhile); this stack's workflow idles.
    await call('DELETE /repos/{owner}/{repo}/import/sync', `${base}/sync`, 409, { auth: octocat.auth });
    const syncing = await getImport('octocat', 'followed');
    if (!syncing) throw new Error('no import');
    await enterStatus('octocat', 'followed', syncing.attempt, 'complete');
    await call('DELETE /repos/{owner}/{repo}/import/sync', `${base}/sync`, 200, { auth: octocat.auth });
    await call('POST /repos/{owner}/{repo}/import/sync', `${base}/sync`, 422, { auth: octocat.auth });
    expectConformance();
  });
});

describe('the revision map', () => {
  it('lists origin revisions with their commits, and errors as the import does', async () => {
    await call('POST /user/repos', '/user/repos', 201, { auth: octocat.auth, body: { name: 'mapped' } });
    const base = '/repos/octocat/mapped/import';
    await call('GET /repos/{owner}/{repo}/import/revisions', `${base}/revisions`, 404, {
      auth: octocat.auth,
    });
    await call('PUT /repos/{owner}/{repo}/import', base, 201, {
      auth: octocat.auth,
      body: { vcs_url: 'http://127.0.0.1:9/origin.git', vcs: 'git' },
    });
    const record = await getImport('octocat', 'mapped');
    if (!record) throw new Error('no import');
    const origin = 'a'.repeat(40);
    await storeRevisionMap('octocat', 'mapped', record.importId, record.attempt, [
      { originRevision: origin, commit: 'b'.repeat(40) },
    ]);
    await call('GET /repos/{owner}/{repo}/import/revisions', `${base}/revisions`, 200, {
      auth: octocat.auth,
    });
    await call(
      'GET /repos/{owner}/{repo}/import/revisions/{origin_revision}',
      `${base}/revisions/${origin}`,
      200,
      { auth: octocat.auth },
    );
    await call(
      'GET /repos/{owner}/{repo}/import/revisions/{origin_revision}',
      `${base}/revisions/${'c'.repeat(40)}`,
      404,
      { auth: octocat.auth },
    );
    expectConformance();
  });
});

describe('authors files', () => {
  it('PUT …/import/authors answers its documented fields, and errors as mapping one author does', async () => {
    await call('POST /user/repos', '/user/repos', 201, { auth: octocat.auth, body: { name: 'authored' } });
    const base = '/repos/octocat/authored/import';
    const file = { content: 'ann = Ann Example <ann@example.com>\n' };
    await call('PUT /repos/{owner}/{repo}/import/authors', `${base}/authors`, 404, {
      auth: octocat.auth,
      body: file,
    });
    await call('PUT /repos/{owner}/{repo}/import', base, 201, {
      auth: octocat.auth,
      body: { vcs_url: 'http://127.0.0.1:9/origin.git', vcs: 'git' },
    });
    const record = await getImport('octocat', 'authored');
    if (!record) throw new Error('no import');
    await addAuthors('octocat', 'authored', record.importId, record.attempt, [
      { remoteId: 'ann <ann@old.example>', remoteName: 'ann', name: 'ann', email: 'ann@old.example' },
    ]);
    const body = await call('PUT /repos/{owner}/{repo}/import/authors', `${base}/authors`, 200, {
      auth: octocat.auth,
      body: file,
    });
    expect(body.mapped[0]).toMatchObject({ remote_name: 'ann', name: 'Ann Example' });
    await call('PUT /repos/{owner}/{repo}/import/authors', `${base}/authors`, 422, {
      auth: octocat.auth,
      body: { content: 'ann = Ann <no-at>\n' },
    });
    expectConformance();
  });
});

describe('import batches', () => {
  it('every /user/import-batches operation answers its documented fields', async () => {
    const auth = octocat.auth;
    const created = await call('POST /user/import-batches', '/user/import-batches', 201, {
      auth,
      body: { imports: [{ vcs_url: 'http://127.0.0.1:9/batched.git', vcs: 'git', repository: 'batched' }] },
    });
    const one = `/user/import-batches/${created.id}`;
    await call('GET /user/import-batches', '/user/import-batches', 200, { auth });
    await call('GET /user/import-batches/{batch_id}', one, 200, { auth });
    await call('PUT /user/import-batches/{batch_id}/sync', `${one}/sync`, 200, {
      auth,
      body: { interval_minutes: 60 },
    });
    await call('POST /user/import-batches/{batch_id}/sync', `${one}/sync`, 202, { auth });
    await call('DELETE /user/import-batches/{batch_id}/sync', `${one}/sync`, 200, { auth });
    const authors = await call('PUT /user/import-batches/{batch_id}/authors', `${one}/authors`, 200, {
      auth,
      body: { content: 'ann = Ann Example <ann@example.com>\n' },
    });
    expect(authors.outcomes[0]).toMatchObject({ repository: 'batched', outcome: 'skipped' });
    await call('PUT /user/import-batches/{batch_id}/authors', `${one}/authors`, 422, {
      auth,
      body: { content: 'ann = Ann <no-at>\n' },
    });
    await call('DELETE /user/import-batches/{batch_id}', one, 200, { auth });
    expectConformance();
  });
});

describe('security log', () => {
  it('GET /user/security-log answers its documented fields, and 422 for a cursor it did not hand out', async () => {
    const auth = octocat.auth;
    const events = await call('GET /user/security-log', '/user/security-log', 200, { auth });
    expect(events.length).toBeGreaterThan(0);
    await call('GET /user/security-log', '/user/security-log?cursor=bm90LWEtY3Vyc29y', 422, { auth });
    expectConformance();
  });
});

describe('credential revocation', () => {
  it('POST /credentials/revoke answers 202 with an empty object, and 422 in the validation error shape', async () => {
    await call('POST /credentials/revoke', '/credentials/revoke', 202, {
      body: { credentials: [`ghp_${'x'.repeat(36)}`] },
    });
    await call('POST /credentials/revoke', '/credentials/revoke', 422, { body: { credentials: 'x' } });
    expectConformance();
  });
});

describe('errors without credentials', () => {
  // The app-side routes answer 404 rather than 401 without client credentials, as GitHub does.
  it('every authenticated JSON route answers 401 (app side: 404) in the described error shape', async () => {
    const example: Record<string, string> = {
      login: 'octocat',
      owner: 'octocat',
      repo: 'shapes',
      client_id: app.clientId,
      access_token: `gho_${'x'.repeat(36)}`,
      fingerprint: 'laptop',
    };
    for (const route of REST_JSON.filter((r) => r.auth !== 'none')) {
      const path = restPath(route.path);
      const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => example[name] ?? '1');
      const status = route.auth === 'app' ? 404 : 401;
      await call(`${route.method} ${path}`, url, status, route.method === 'GET' ? {} : { body: {} });
    }
    expectConformance();
  });
});

describe('coverage', () => {
  it('checks a success of every JSON route in the route table (a new route needs a shape check here)', () => {
    expect(JSON_ROUTES.filter((route) => !validated.has(route))).toEqual([]);
  });
});
