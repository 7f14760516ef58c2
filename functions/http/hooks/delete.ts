import { apiHandler } from '#http/middleware/http-stack';
import { removeHook } from '#services/webhooks';
import { targetHook } from './target.ts';

/** DELETE /repos/:owner/:repo/hooks/:hook_id: removes a webhook (`admin:repo_hook` or `repo`). */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const { repository, hook } = await targetHook(caller, params);
  await removeHook(repository, hook.id);
  return { status: 204 };
});
