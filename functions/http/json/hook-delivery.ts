import type { HookDelivery } from '#domain/webhooks';

/** GitHub's `hook-delivery-item`: a delivery in a list. */
export function deliveryItemJson(delivery: HookDelivery) {
  return {
    id: delivery.id,
    guid: delivery.guid,
    delivered_at: delivery.deliveredAt,
    redelivery: delivery.redelivery,
    duration: delivery.duration,
    status: delivery.status,
    status_code: delivery.statusCode,
    event: delivery.event,
    action: delivery.action,
    installation_id: null,
    repository_id: delivery.repositoryId,
    throttled_at: null,
  };
}

/** GitHub's `hook-delivery`: the item's fields, the URL, and the request and response as recorded. */
export function deliveryJson(delivery: HookDelivery) {
  const { throttled_at: _none, ...item } = deliveryItemJson(delivery);
  return {
    ...item,
    url: delivery.url,
    request: delivery.request,
    response: delivery.response,
  };
}
