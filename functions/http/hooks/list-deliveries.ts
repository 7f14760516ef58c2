import { apiHandler } from '#http/middleware/http-stack';
import { hookDeliveries } from '#services/hook-deliveries';
import { deliveryItemJson } from '../json/hook-delivery.ts';
import { targetHook } from './target.ts';

/** GET …/hooks/:hook_id/deliveries: the hook's recorded deliveries, newest first (`per_page`, at most 100). */
export const handler = apiHandler({}, async ({ caller, params, query }) => {
  const { hook } = await targetHook(caller, params);
  const perPage = Math.min(Math.max(Number(query.per_page) || 30, 1), 100);
  return { status: 200, body: (await hookDeliveries(hook, perPage)).map(deliveryItemJson) };
});
