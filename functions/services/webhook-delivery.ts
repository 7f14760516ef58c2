/**
 * One delivery attempt, in the delivery function (never in a request): the hook as it is now, its
 * secret opened only to sign, the body posted through the network guard (the URL resolved once,
 * every address checked, dialled by address; no redirect followed; 10 s in all; the certificate
 * verified unless the hook says `insecure_ssl: "1"`), and the attempt recorded with what was sent
 * and what came back, bodies bounded.
 */

import {
  attemptsOfDelivery,
  getWebhook,
  newDeliveryId,
  putDelivery,
  recordLastResponse,
} from '#data/webhooks';
import {
  boundedBody,
  DELIVERY_TIMEOUT_MS,
  delivered,
  deliveryBody,
  deliveryHeaders,
  type HookDelivery,
  type HookResponse,
  MAX_RECORDED_BODY_BYTES,
  receiverWording,
  statusOfCode,
  type Webhook,
} from '#domain/webhooks';
import { config } from '#shared/config';
import { log } from '#shared/log';
import { guardedRequest } from '#vcs/network-guard';
import { ForbiddenAddress, OriginFailed } from '#vcs/origin';
import { secretSealer } from './secret-sealer.ts';
import type { DeliveryJob } from './webhook-events.ts';
import { hookSecretContext } from './webhooks.ts';

/**
 * Thrown when the receiver did not take the delivery (after it is recorded): the asynchronous
 * invocation retries it, and after the last retry it goes to the dead-letter queue.
 */
export class DeliveryFailed extends Error {
  override readonly name = 'DeliveryFailed';
}

const flatHeaders = (
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers)
      .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]),
  );

interface Answer {
  readonly statusCode: number;
  readonly status: string;
  readonly headers: Record<string, string>;
  readonly body: string | null;
  /** Worth trying again (not a refused address). */
  readonly retry: boolean;
}

async function post(hook: Webhook, headers: Record<string, string>, body: string): Promise<Answer> {
  try {
    const response = await guardedRequest(
      hook.url,
      { allowedAddresses: config().originAllowedAddresses, connectTimeoutMs: DELIVERY_TIMEOUT_MS },
      {
        method: 'POST',
        headers,
        body,
        timeoutMs: DELIVERY_TIMEOUT_MS,
        maxBytes: MAX_RECORDED_BODY_BYTES,
        followRedirects: false,
        ...(hook.insecureSsl === '1' ? { verifyCertificate: false } : {}),
      },
    );
    return {
      statusCode: response.status,
      status: statusOfCode(response.status),
      headers: flatHeaders(response.headers),
      body: response.body.toString('utf8'),
      retry: true,
    };
  } catch (error) {
    if (error instanceof ForbiddenAddress)
      return {
        statusCode: 0,
        status: 'Refused: the URL points to an address webhooks may not reach',
        headers: {},
        body: null,
        retry: false,
      };
    const status =
      error instanceof OriginFailed ? receiverWording(error.message) : 'failed to connect to host';
    return { statusCode: 0, status, headers: {}, body: null, retry: true };
  }
}

/**
 * Delivers one job and records it; throws `DeliveryFailed` when a retry may help. A job whose
 * delivery is already recorded as taken (its function died after that, and Lambda's event queue
 * runs it again) is not sent again: the receiver has it, and the hook shows it once.
 */
export async function deliverJob(job: DeliveryJob): Promise<HookDelivery | undefined> {
  const hook = await getWebhook(job.owner, job.repo, job.hookId);
  if (!hook) return undefined; // deleted since the event: nothing to tell
  if (!job.redelivery) {
    const attempts = await attemptsOfDelivery(hook.owner, hook.repo, hook.id, job.guid);
    const taken = attempts.find((attempt) => !attempt.redelivery && delivered(attempt));
    if (taken) {
      log('info', 'webhook delivery already made', { hookId: hook.id, guid: job.guid });
      return taken;
    }
  }
  const secret = hook.sealedSecret
    ? (await secretSealer().open(hook.sealedSecret, hookSecretContext(hook))).toString('utf8')
    : undefined;
  const body = deliveryBody(hook.contentType, job.payload);
  const headers = deliveryHeaders({
    hookId: hook.id,
    guid: job.guid,
    event: job.event,
    contentType: hook.contentType,
    body,
    ...(secret ? { secret } : {}),
  });
  const started = performance.now();
  const answer = await post(hook, headers, body);
  const delivery: HookDelivery = {
    id: await newDeliveryId(),
    guid: job.guid,
    hookId: hook.id,
    event: job.event,
    action: job.action,
    redelivery: job.redelivery,
    deliveredAt: new Date().toISOString(),
    duration: Math.round(performance.now() - started) / 1000,
    status: answer.status,
    statusCode: answer.statusCode,
    repositoryId: job.repositoryId,
    url: hook.url,
    request: { headers, payload: job.payload },
    response: { headers: answer.headers, payload: answer.body === null ? null : boundedBody(answer.body) },
  };
  const last: HookResponse = delivered(delivery)
    ? { code: answer.statusCode, status: 'active', message: 'OK' }
    : { code: answer.statusCode || null, status: 'failed', message: answer.status };
  if (!(await putDelivery(hook.owner, hook.repo, delivery))) return undefined; // deleted meanwhile
  await recordLastResponse(hook.owner, hook.repo, hook.id, last);
  log(delivered(delivery) ? 'info' : 'warn', 'webhook delivery', {
    hookId: hook.id,
    guid: job.guid,
    event: job.event,
    statusCode: answer.statusCode,
  });
  if (!delivered(delivery) && answer.retry)
    throw new DeliveryFailed(`Delivery ${job.guid}: ${answer.status}`);
  return delivery;
}
