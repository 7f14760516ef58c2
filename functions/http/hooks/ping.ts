import { apiHandler } from '#http/middleware/http-stack';
import { pingHook } from '#services/webhook-events';
import { targetHook } from './target.ts';

/** POST /repos/:owner/:repo/hooks/:hook_id/pings: queues a `ping` delivery; 204 at once. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const { repository, hook } = await targetHook(caller, params);
  await pingHook(repository, hook);
  return { status: 204 };
});
