/** A hook's recorded deliveries (newest first, a page at a time) and redelivering one by hand. */

import { getDelivery, readDeliveries } from '#data/webhooks';
import { type Neighbours, neighboursOf, positionOf } from '#domain/cursor-pagination';
import type { Repository } from '#domain/repositories';
import type { HookDelivery, Webhook } from '#domain/webhooks';
import { notFound, validationFailed } from '#shared/errors';
import { enqueueDelivery } from './webhook-events.ts';

/**
 * One page of a hook's deliveries from `cursor` (absent: the newest), and where the pages beside
 * it start. A cursor this service did not hand out is a 422 naming the field.
 */
export async function hookDeliveries(
  hook: Webhook,
  cursor: string | undefined,
  perPage: number,
): Promise<{ items: HookDelivery[]; neighbours: Neighbours }> {
  const from = cursor === undefined ? undefined : positionOf(cursor);
  if (cursor !== undefined && from === undefined)
    throw validationFailed([{ resource: 'HookDelivery', field: 'cursor', code: 'invalid' }]);
  const { items, more } = await readDeliveries(hook.owner, hook.repo, hook.id, from, perPage);
  return {
    items,
    neighbours: neighboursOf(
      from,
      items.map((delivery) => delivery.id),
      more,
    ),
  };
}

export async function hookDelivery(hook: Webhook, id: number): Promise<HookDelivery> {
  const delivery = await getDelivery(hook.owner, hook.repo, hook.id, id);
  if (!delivery) throw notFound();
  return delivery;
}

/**
 * POST …/attempts: the recorded payload again, with the same GUID (as GitHub), flagged as a
 * redelivery; signed with the hook's secret as it is now.
 */
export async function redeliver(repository: Repository, hook: Webhook, id: number): Promise<void> {
  const delivery = await hookDelivery(hook, id);
  await enqueueDelivery({
    owner: hook.owner,
    repo: hook.repo,
    hookId: hook.id,
    repositoryId: repository.id,
    guid: delivery.guid,
    event: delivery.event,
    action: delivery.action,
    payload: delivery.request.payload as Record<string, unknown>,
    redelivery: true,
  });
}
