import { apiHandler } from '#http/middleware/http-stack';
import { redeliver } from '#services/hook-deliveries';
import { targetHook } from './target.ts';

/** POST …/deliveries/:delivery_id/attempts: queues the delivery again; 202 with `{}` as GitHub. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const { repository, hook } = await targetHook(caller, params);
  await redeliver(repository, hook, Number(params.delivery_id));
  return { status: 202, body: {} };
});
