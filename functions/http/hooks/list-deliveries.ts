import { cursorLinkHeader } from '#domain/cursor-pagination';
import { pageRequest } from '#domain/pagination';
import { apiHandler } from '#http/middleware/http-stack';
import { hookDeliveries } from '#services/hook-deliveries';
import { deliveryItemJson } from '../json/hook-delivery.ts';
import { targetHook } from './target.ts';

/**
 * GET …/hooks/:hook_id/deliveries: the hook's recorded deliveries, newest first, paged by
 * `per_page` (at most 100) and the opaque `cursor` the `Link` header's `next` and `prev` carry.
 */
export const handler = apiHandler({}, async ({ caller, params, query, urls }) => {
  const { repository, hook } = await targetHook(caller, params);
  const { perPage } = pageRequest(query);
  const { items, neighbours } = await hookDeliveries(hook, query.cursor || undefined, perPage);
  const url = `${urls.api}/repos/${repository.ownerLogin}/${repository.name}/hooks/${hook.id}/deliveries`;
  const link = cursorLinkHeader(url, perPage, neighbours);
  return { status: 200, body: items.map(deliveryItemJson), ...(link ? { headers: { Link: link } } : {}) };
});
