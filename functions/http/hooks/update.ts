import { hookJson } from '#domain/webhook-payloads';
import { apiHandler } from '#http/middleware/http-stack';
import { editHook } from '#services/webhooks';
import { editBody, hookInput } from './body.ts';
import { targetHook } from './target.ts';

/** PATCH /repos/:owner/:repo/hooks/:hook_id: edits a webhook (fields not sent are kept). */
export const handler = apiHandler(
  { body: { schema: editBody, resource: 'Hook' } },
  async ({ body, caller, params }) => {
    const { repository, hook } = await targetHook(caller, params);
    return { status: 200, body: hookJson(await editHook(repository, hook.id, hookInput(body))) };
  },
);
