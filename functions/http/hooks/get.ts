import { hookJson } from '#domain/webhook-payloads';
import { apiHandler } from '#http/middleware/http-stack';
import { targetHook } from './target.ts';

/** GET /repos/:owner/:repo/hooks/:hook_id: one webhook, its secret masked. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const { hook } = await targetHook(caller, params);
  return { status: 200, body: hookJson(hook) };
});
