/**
 * Events to hooks: each hook an event concerns gets a delivery job, which leaves the request (or
 * the workflow step) through the delivery function's asynchronous invocation: Lambda's own queue
 * in AWS (retries, then the dead-letter queue), the local stand-in of it on this machine. Nothing
 * here waits for a receiver.
 */
import { randomUUID } from 'node:crypto';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { getRepository } from '#data/repositories';
import { getUser } from '#data/users';
import { listWebhooks } from '#data/webhooks';
import { type AttemptName, attemptOutcomeId, hookDeliveryGuid } from '#domain/event-identity';
import type { Repository } from '#domain/repositories';
import {
  hookJson,
  type ImportOutcome,
  repositoryPayload,
  senderJson,
  zenLine,
} from '#domain/webhook-payloads';
import { subscribes, type Webhook } from '#domain/webhooks';
import { awsClientSettings } from '#shared/aws-clients';
import { config } from '#shared/config';
import { log } from '#shared/log';

/** What the delivery function is invoked with: one attempt's worth, the payload ready, no secret. */
export interface DeliveryJob {
  readonly owner: string;
  readonly repo: string;
  readonly hookId: number;
  readonly repositoryId: number;
  readonly guid: string;
  readonly event: string;
  readonly action: string | null;
  readonly payload: Record<string, unknown>;
  /** Sent again by hand (`POST …/attempts`). */
  readonly redelivery: boolean;
}

let client: LambdaClient | undefined;
function lambda(): LambdaClient {
  if (!client) {
    client = new LambdaClient(awsClientSettings(config().lambdaEndpoint));
  }
  return client;
}

/** Queues one delivery (asynchronous invocation: the call returns once it is queued). */
export async function enqueueDelivery(job: DeliveryJob): Promise<void> {
  const name = config().webhookDeliveryFunction;
  if (!name) {
    log('warn', 'webhook delivery not queued: no delivery function configured', { hookId: job.hookId });
    return;
  }
  await lambda().send(
    new InvokeCommand({ FunctionName: name, InvocationType: 'Event', Payload: JSON.stringify(job) }),
  );
}

interface EventContext {
  readonly repository: Repository;
  readonly owner: NonNullable<Awaited<ReturnType<typeof getUser>>>;
}

async function contextOf(repository: Repository): Promise<EventContext | undefined> {
  const owner = await getUser(repository.ownerLogin);
  return owner ? { repository, owner } : undefined;
}

/**
 * One hook's job for an event. `eventId` names the event when it may be sent again (a workflow
 * step run again after its worker died): its GUID is then derived from it and the hook, the same
 * on every copy; otherwise (a ping) it is new.
 */
function jobFor(
  hook: Webhook,
  context: EventContext,
  event: string,
  action: string | null,
  fields: Record<string, unknown>,
  eventId?: string,
): DeliveryJob {
  return {
    owner: hook.owner,
    repo: hook.repo,
    hookId: hook.id,
    repositoryId: context.repository.id,
    guid: eventId === undefined ? randomUUID() : hookDeliveryGuid(eventId, hook.id),
    event,
    action,
    payload: {
      ...fields,
      repository: repositoryPayload(context.repository, context.owner, hook),
      sender: senderJson(context.owner, hook),
    },
    redelivery: false,
  };
}

/** `ping`: sent when a hook is made and on `POST …/pings`, whatever its events. */
export async function pingHook(repository: Repository, hook: Webhook): Promise<void> {
  const context = await contextOf(repository);
  if (!context) return;
  await enqueueDelivery(
    jobFor(hook, context, 'ping', null, { zen: zenLine(hook.id), hook_id: hook.id, hook: hookJson(hook) }),
  );
}

/**
 * `repository_import`: an attempt of an import or a sync ended. Each hook's GUID is derived from
 * the attempt and its outcome, so a step that runs again sends the same one. Never fails its
 * caller (the workflow step or the cancellation): a hook that cannot be told is logged, not a
 * failed import.
 */
export async function announceImportOutcome(attempt: AttemptName, status: ImportOutcome): Promise<void> {
  const { owner, repo } = attempt;
  const eventId = attemptOutcomeId(attempt, status, 'repository_import');
  try {
    const repository = await getRepository(owner, repo);
    if (!repository) return;
    const hooks = (await listWebhooks(repository.ownerLogin, repository.name)).filter((hook) =>
      subscribes(hook, 'repository_import'),
    );
    if (hooks.length === 0) return;
    const context = await contextOf(repository);
    if (!context) return;
    await Promise.all(
      hooks.map((hook) =>
        enqueueDelivery(jobFor(hook, context, 'repository_import', null, { status }, eventId)),
      ),
    );
  } catch (error) {
    log('warn', 'repository_import event not queued', { owner, repo, error: (error as Error).message });
  }
}
