import { hookJson } from '#domain/webhook-payloads';
import { apiHandler } from '#http/middleware/http-stack';
import { pingHook } from '#services/webhook-events';
import { createHook, hookedRepository } from '#services/webhooks';
import { requiresAuthentication } from '#shared/errors';
import { createBody, hookInput } from './body.ts';

/** POST /repos/:owner/:repo/hooks: a new webhook, pinged at once (as GitHub does). */
export const handler = apiHandler(
  { body: { schema: createBody, resource: 'Hook' } },
  async ({ body, caller, params, urls }) => {
    if (caller.kind !== 'user') throw requiresAuthentication();
    const repository = await hookedRepository(caller.user.login, params.owner ?? '', params.repo ?? '');
    const hook = await createHook(repository, hookInput(body), urls);
    await pingHook(repository, hook);
    const json = hookJson(hook);
    return { status: 201, body: json, headers: { Location: json.url } };
  },
);
