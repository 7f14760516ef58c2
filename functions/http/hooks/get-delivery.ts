import { apiHandler } from '#http/middleware/http-stack';
import { hookDelivery } from '#services/hook-deliveries';
import { deliveryJson } from '../json/hook-delivery.ts';
import { targetHook } from './target.ts';

/** GET …/hooks/:hook_id/deliveries/:delivery_id: one delivery with its request and response. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const { hook } = await targetHook(caller, params);
  return { status: 200, body: deliveryJson(await hookDelivery(hook, Number(params.delivery_id))) };
});
