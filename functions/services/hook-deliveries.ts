/** A hook's recorded deliveries (newest first, a page at a time) and redelivering one by hand. */

import { countRedelivery, getDelivery, readDeliveries } from '#data/webhooks';
import { type Neighbours, neighboursOf, positionOf } from '#domain/cursor-pagination';
import type { Repository } from '#domain/repositories';
import {
  type HookDelivery,
  REDELIVERIES_PER_WINDOW,
  REDELIVERY_WINDOW_SECONDS,
  type Webhook,
} from '#domain/webhooks';
import { HttpError, notFound, validationFailed } from '#shared/errors';
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

/** GitHub's secondary-rate-limit answer, naming the limit and when the window ends. */
function tooManyRedeliveries(reset: number): HttpError {
  const wait = Math.max(1, reset - Math.floor(Date.now() / 1000));
  return new HttpError(
    429,
    `You have exceeded a secondary rate limit: at most ${REDELIVERIES_PER_WINDOW} redeliveries of this hook every ${REDELIVERY_WINDOW_SECONDS / 60} minutes. Please wait ${wait} seconds before you try again.`,
    {
      documentationPath: '/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
      headers: { 'Retry-After': String(wait) },
    },
  );
}

/**
 * POST …/attempts: the recorded payload again, with the same GUID (as GitHub), flagged as a
 * redelivery; signed with the hook's secret as it is now. At most `REDELIVERIES_PER_WINDOW` per
 * hook in a fixed window of `REDELIVERY_WINDOW_SECONDS` and the one before it (429 with
 * `Retry-After` past it, when this window ends; it may take one more window for a burst that
 * spanned the previous one to fall out); an unknown delivery is 404 and costs nothing of the
 * allowance.
 */
export async function redeliver(repository: Repository, hook: Webhook, id: number): Promise<void> {
  const delivery = await hookDelivery(hook, id);
  const window = Math.floor(Date.now() / 1000 / REDELIVERY_WINDOW_SECONDS);
  const reset = (window + 1) * REDELIVERY_WINDOW_SECONDS;
  const counted = await countRedelivery(hook.owner, hook.repo, hook.id, {
    number: window,
    max: REDELIVERIES_PER_WINDOW,
    expiresAt: reset + 2 * REDELIVERY_WINDOW_SECONDS,
  });
  if (!counted) throw tooManyRedeliveries(reset);
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
