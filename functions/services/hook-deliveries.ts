/** A hook's recorded deliveries (newest first) and redelivering one by hand. */

import { getDelivery, listDeliveries } from '#data/webhooks';
import type { Repository } from '#domain/repositories';
import type { HookDelivery, Webhook } from '#domain/webhooks';
import { notFound } from '#shared/errors';
import { enqueueDelivery } from './webhook-events.ts';

export const hookDeliveries = (hook: Webhook, limit: number): Promise<HookDelivery[]> =>
  listDeliveries(hook.owner, hook.repo, hook.id, limit);

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
