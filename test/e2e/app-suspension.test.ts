import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { createApp, createUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;

const api = (path: string, headers: Record<string, string>, init: RequestInit = {}) =>
  fetch(`${stack.baseUrl}${path}`, { ...init, headers });

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('suspending an application', () => {
  it('stops its tokens and its application-side calls at once, and unsuspending restores them', async () => {
    // Prepare: a user holds a token of the application.
    const user = await createUser(stack.endpointsFile, 'suspendee');
    const app = await createApp(stack.endpointsFile, 'suspendee', 'Suspended Later');
    const created = await api(
      '/authorizations',
      { Authorization: user.auth },
      {
        method: 'POST',
        body: JSON.stringify({ note: 'app token', client_id: app.clientId, client_secret: app.clientSecret }),
      },
    );
    expect(created.status).toBe(201);
    const { token } = (await json(created)) as { token: string };
    const asToken = { Authorization: `token ${token}` };
    const tokenPath = `/applications/${app.clientId}/tokens/${token}`;
    expect((await api('/user', asToken)).status).toBe(200);
    expect((await api(tokenPath, { Authorization: app.basic })).status).toBe(200);

    // Act: suspend it with the admin CLI.
    expect((await admin(stack.endpointsFile, 'app', 'suspend', app.clientId)).code).toBe(0);

    // Assess: the token no longer authenticates; every application-side call is 403.
    const refused = await api('/user', asToken);
    expect(refused.status).toBe(401);
    expect((await json(refused)).message).toBe('Bad credentials');
    expect((await api(`/user?access_token=${token}`, {})).status).toBe(401);
    for (const method of ['GET', 'POST', 'DELETE']) {
      const response = await api(tokenPath, { Authorization: app.basic }, { method });
      expect(response.status, method).toBe(403);
      expect((await json(response)).message, method).toBe(
        'Your application has been suspended. Contact support@github.com.',
      );
    }
    const revokeGrant = await api(
      `/applications/${app.clientId}/grants/${token}`,
      { Authorization: app.basic },
      { method: 'DELETE' },
    );
    expect(revokeGrant.status).toBe(403);
    // Suspension is told only to the application itself: a wrong secret is still 404.
    const wrongSecret = `Basic ${Buffer.from(`${app.clientId}:${'0'.repeat(40)}`).toString('base64')}`;
    expect((await api(tokenPath, { Authorization: wrongSecret })).status).toBe(404);

    // Act: reinstate it. Assess: the very same token works again (nothing was reset or revoked).
    expect((await admin(stack.endpointsFile, 'app', 'unsuspend', app.clientId)).code).toBe(0);
    const restored = await api('/user', asToken);
    expect(restored.status).toBe(200);
    expect((await json(restored)).login).toBe('suspendee');
    const checked = await api(tokenPath, { Authorization: app.basic });
    expect(checked.status).toBe(200);
    expect((await json(checked)).token).toBe(token);
  });
});
