import { deliverJob } from '#services/webhook-delivery';
import type { DeliveryJob } from '#services/webhook-events';

/**
 * The webhook delivery function, invoked asynchronously with one `DeliveryJob`: Lambda's own
 * queue retries a `DeliveryFailed` and then hands the job to the dead-letter queue.
 */
export const handler = async (job: DeliveryJob): Promise<void> => {
  await deliverJob(job);
};
