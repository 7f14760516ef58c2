import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, personalToken } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

/*
 * The API root (`GET {base_url}/`) and the GraphQL endpoint (`POST /api/graphql`) over HTTP, as
 * gh and other GitHub clients call them: the root checks a host and a token, GraphQL answers the
 * small schema and GraphQL's own errors for anything else.
 */
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let octocat: Awaited<ReturnType<typeof createUser>>;
let token: string;
let publicOnly: string;

beforeAll(async () => {
  stack = await startTestStack();
  octocat = await createUser(stack.endpointsFile, 'octocat');
  [{ token }, { token: publicOnly }] = await Promise.all([
    personalToken(stack.baseUrl, octocat.auth, ['repo', 'read:org']),
    personalToken(stack.baseUrl, octocat.auth, ['public_repo']),
  ]);
  for (const [name, isPrivate] of [
    ['hello', false],
    ['secret', true],
  ] as const) {
    const response = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: octocat.auth },
      body: JSON.stringify({ name, private: isPrivate }),
    });
    expect(response.status).toBe(201);
  }
});
afterAll(async () => {
  await stack?.stop();
});

const graphql = (body: unknown, authorization: string | null = `token ${token}`) =>
  fetch(`${stack.webUrl}/api/graphql`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(authorization ? { Authorization: authorization } : {}),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('the API root', () => {
  it('answers anyone with URL templates on this host, with and without the trailing slash', async () => {
    for (const path of ['/', '']) {
      const response = await fetch(`${stack.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('x-github-media-type')).toBe('github.v3; format=json');
      expect(response.headers.get('x-oauth-scopes')).toBeNull();
      expect(await json(response)).toEqual({
        current_user_url: `${stack.baseUrl}/user`,
        current_user_authorizations_html_url: `${stack.webUrl}/settings/connections/applications{/client_id}`,
        authorizations_url: `${stack.baseUrl}/authorizations`,
        keys_url: `${stack.baseUrl}/user/keys`,
        repository_url: `${stack.baseUrl}/repos/{owner}/{repo}`,
        current_user_repositories_url: `${stack.baseUrl}/user/repos`,
        user_url: `${stack.baseUrl}/users/{user}`,
      });
    }
  });

  it('tells a token its scopes, as gh reads them when it signs in', async () => {
    const response = await fetch(`${stack.baseUrl}/`, { headers: { Authorization: `token ${token}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-oauth-scopes')).toBe('read:org, repo');
    expect(response.headers.get('x-accepted-oauth-scopes')).toBe('');
  });

  it('answers a bad token 401 Bad credentials', async () => {
    const response = await fetch(`${stack.baseUrl}/`, {
      headers: { Authorization: `token ghp_${'a'.repeat(36)}` },
    });
    expect(response.status).toBe(401);
    expect(await json(response)).toMatchObject({ message: 'Bad credentials' });
  });
});

describe('GraphQL', () => {
  it('answers viewer { login id name email } for a token, with the scope headers', async () => {
    const response = await graphql({ query: 'query UserCurrent{viewer{login id name email}}' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-oauth-scopes')).toBe('read:org, repo');
    const user = await json(
      await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: octocat.auth } }),
    );
    expect(await json(response)).toEqual({
      data: { viewer: { login: 'octocat', id: user.node_id, name: user.name, email: '' } },
    });
  });

  it('answers the repository query gh repo clone sends, with variables', async () => {
    const query = `fragment repo on Repository { id name owner { login } hasIssuesEnabled description hasWikiEnabled viewerPermission defaultBranchRef { name } }
      query RepositoryInfo($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { ...repo parent { ...repo } mergeCommitAllowed rebaseMergeAllowed squashMergeAllowed } }`;
    const response = await graphql({ query, variables: { owner: 'OctoCat', name: 'hello' } });
    const rest = await json(await fetch(`${stack.baseUrl}/repos/octocat/hello`));
    expect(await json(response)).toEqual({
      data: {
        repository: {
          id: rest.node_id,
          name: 'hello',
          owner: { login: 'octocat' },
          hasIssuesEnabled: false,
          description: null,
          hasWikiEnabled: false,
          viewerPermission: 'ADMIN',
          defaultBranchRef: null,
          parent: null,
          mergeCommitAllowed: false,
          rebaseMergeAllowed: false,
          squashMergeAllowed: false,
        },
      },
    });
  });

  it('hides a private repository from a token without repo, as REST does: NOT_FOUND and null', async () => {
    const query = '{ repository(owner: "octocat", name: "secret") { name isPrivate } }';
    expect(await json(await graphql({ query }))).toEqual({
      data: { repository: { name: 'secret', isPrivate: true } },
    });
    expect(await json(await graphql({ query }, `token ${publicOnly}`))).toEqual({
      data: { repository: null },
      errors: [
        {
          type: 'NOT_FOUND',
          message: "Could not resolve to a Repository with the name 'octocat/secret'.",
          locations: [{ line: 1, column: 3 }],
          path: ['repository'],
        },
      ],
    });
  });

  it('answers an unknown field, a syntax error and a mutation with GraphQL’s own errors, never a 500', async () => {
    const unknown = await graphql({ query: '{ viewer { login followers { totalCount } } }' });
    expect(unknown.status).toBe(200);
    expect(await json(unknown)).toEqual({
      errors: [
        { message: 'Cannot query field "followers" on type "User".', locations: [{ line: 1, column: 18 }] },
      ],
    });
    const broken = await json(await graphql({ query: '{ viewer { login ' }));
    expect(broken.errors[0].message).toMatch(/^Syntax Error/);
    const mutation = await json(await graphql({ query: 'mutation { addStar { clientMutationId } }' }));
    expect(mutation.errors[0].message).toBe('Schema is not configured to execute mutation operation.');
    const noQuery = await graphql({ variables: {} });
    expect(noQuery.status).toBe(200);
    expect(await json(noQuery)).toEqual({
      errors: [{ message: 'A query attribute must be specified and must be a string.' }],
    });
    expect((await graphql('{"query": 1')).status).toBe(400);
  });

  it('bounds what one document may cost: tokens, and repository look-ups', async () => {
    const long = await json(await graphql({ query: `{ ${'viewer { login } '.repeat(1_000)} }` }));
    expect(long.errors[0].message).toMatch(/^Syntax Error: Document contains more th\w+ 2000 tokens/);
    const aliases = Array.from(
      { length: 12 },
      (_, i) => `r${i}: repository(owner: "octocat", name: "r${i}") { name }`,
    );
    const many = await json(await graphql({ query: `{ ${aliases.join(' ')} }` }));
    expect(many.errors.filter((error: { type: string }) => error.type === 'NOT_FOUND')).toHaveLength(10);
    expect(
      many.errors.filter((error: { type: string }) => error.type === 'MAX_NODE_LIMIT_EXCEEDED'),
    ).toHaveLength(2);
  });

  it('needs authentication as every user route: none is 401 Requires authentication, a bad token 401', async () => {
    const anonymous = await graphql({ query: '{ viewer { login } }' }, null);
    expect(anonymous.status).toBe(401);
    expect(await json(anonymous)).toMatchObject({ message: 'Requires authentication' });
    const bad = await graphql({ query: '{ viewer { login } }' }, `token ghp_${'a'.repeat(36)}`);
    expect(bad.status).toBe(401);
    expect(await json(bad)).toMatchObject({ message: 'Bad credentials' });
  });
});
