/**
 * Repository webhooks: create, read, edit and delete, for the repository's owner only (anyone
 * else gets 404, as GitHub answers). The secret is sealed to its hook before it is stored and is
 * never shown again (`********`). A URL goes through the network guard here and again at every
 * delivery (`webhook-delivery.ts`).
 */

import { getRepository } from '#data/repositories';
import {
  deleteDeliveries,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  newHookId,
  putWebhook,
  replaceWebhook,
} from '#data/webhooks';
import { sameAsciiCaseless } from '#domain/ascii-case';
import type { Repository } from '#domain/repositories';
import {
  DEFAULT_EVENTS,
  type HookContentType,
  isEventName,
  UNUSED_RESPONSE,
  type Webhook,
} from '#domain/webhooks';
import { config } from '#shared/config';
import { type FieldError, notFound, validationFailed } from '#shared/errors';
import { log } from '#shared/log';
import { SEAL_PURPOSE } from '#shared/seal-purposes';
import type { PublicUrls } from '#shared/urls';
import { checkedAddresses } from '#vcs/address-check';
import { ForbiddenAddress } from '#vcs/origin';
import { secretSealer } from './secret-sealer.ts';

/** The repository, when `login` may manage its hooks (its owner); 404 otherwise. */
export async function hookedRepository(login: string, owner: string, name: string): Promise<Repository> {
  const repository = await getRepository(owner, name);
  if (!repository || !sameAsciiCaseless(repository.ownerLogin, login)) throw notFound();
  return repository;
}

/** The seal context of a hook's secret: bound to the repository and the hook. */
export const hookSecretContext = (hook: Pick<Webhook, 'owner' | 'repo' | 'id'>) => ({
  purpose: SEAL_PURPOSE.webhookSecret,
  subject: `${hook.owner.toLowerCase()}/${hook.repo.toLowerCase()}#${hook.id}`,
});

export interface HookConfigInput {
  readonly url?: string;
  readonly contentType?: HookContentType;
  /** `''` removes the secret; absent keeps it. */
  readonly secret?: string;
  readonly insecureSsl?: '0' | '1';
}

export interface HookInput {
  readonly config?: HookConfigInput;
  readonly events?: readonly string[];
  readonly addEvents?: readonly string[];
  readonly removeEvents?: readonly string[];
  readonly active?: boolean;
}

/** How long creating or editing a hook waits for its URL's name to resolve. */
const RESOLVE_BUDGET_MS = 3000;

const hookError = (field: string, message: string): FieldError => ({
  resource: 'Hook',
  field,
  code: 'custom',
  message,
});

/**
 * Refuses a URL that is not http(s), carries no host, or whose host is (or resolves to) an address
 * deliveries may not reach. A name that does not resolve now is kept: deliveries check it again.
 */
export async function checkHookUrl(raw: string): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationFailed([hookError('url', 'url is not a valid URL')]);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    throw validationFailed([hookError('url', 'url must be an http or https URL')]);
  if (url.username !== '' || url.password !== '')
    throw validationFailed([hookError('url', 'url must not contain credentials')]);
  // A slow resolver must not hold the request (10 s function): after 3 s the name is kept
  // unchecked here, and every delivery checks it again before it connects.
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, RESOLVE_BUDGET_MS);
  });
  try {
    await Promise.race([
      checkedAddresses(url.hostname, { allowedAddresses: config().originAllowedAddresses }),
      slow,
    ]);
  } catch (error) {
    if (error instanceof ForbiddenAddress)
      throw validationFailed([hookError('url', 'url points to an address webhooks may not reach')]);
  } finally {
    clearTimeout(timer);
  }
  return url;
}

function checkEvents(field: string, events: readonly string[] | undefined): void {
  const bad = events?.find((event) => !isEventName(event));
  if (bad !== undefined) throw validationFailed([hookError(field, `${bad} is not a valid event name`)]);
}

async function sealSecret(hook: Pick<Webhook, 'owner' | 'repo' | 'id'>, secret: string): Promise<string> {
  return secretSealer().seal(Buffer.from(secret), hookSecretContext(hook));
}

/** POST …/hooks: a new hook (`config.url` required, checked by the network guard). */
export async function createHook(
  repository: Repository,
  input: HookInput,
  urls: PublicUrls,
): Promise<Webhook> {
  const url = input.config?.url;
  if (url === undefined)
    throw validationFailed([{ resource: 'Hook', field: 'config.url', code: 'missing_field' }]);
  await checkHookUrl(url);
  checkEvents('events', input.events);
  const id = await newHookId();
  const where = { owner: repository.ownerLogin, repo: repository.name, id };
  const secret = input.config?.secret;
  const timestamp = new Date().toISOString();
  const hook: Webhook = {
    ...where,
    url,
    contentType: input.config?.contentType ?? 'form',
    insecureSsl: input.config?.insecureSsl ?? '0',
    events: [...new Set(input.events ?? DEFAULT_EVENTS)],
    active: input.active ?? true,
    ...(secret ? { sealedSecret: await sealSecret(where, secret) } : {}),
    lastResponse: UNUSED_RESPONSE,
    apiUrl: urls.api,
    webUrl: urls.auth,
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  await putWebhook(hook);
  return hook;
}

export const repositoryHooks = (repository: Repository): Promise<Webhook[]> =>
  listWebhooks(repository.ownerLogin, repository.name);

export async function repositoryHook(repository: Repository, id: number): Promise<Webhook> {
  const hook = await getWebhook(repository.ownerLogin, repository.name, id);
  if (!hook) throw notFound();
  return hook;
}

/** PATCH …/hooks/{id}: fields sent replace those stored; `add_events`/`remove_events` adjust the list. */
export async function editHook(repository: Repository, id: number, input: HookInput): Promise<Webhook> {
  const hook = await repositoryHook(repository, id);
  const change = input.config ?? {};
  if (change.url !== undefined) await checkHookUrl(change.url);
  checkEvents('events', input.events);
  checkEvents('add_events', input.addEvents);
  let events = [...(input.events ?? hook.events), ...(input.addEvents ?? [])];
  events = events.filter((event) => !(input.removeEvents ?? []).includes(event));
  const { sealedSecret: _kept, ...rest } = hook;
  const sealedSecret =
    change.secret === undefined
      ? hook.sealedSecret
      : change.secret === ''
        ? undefined
        : await sealSecret(hook, change.secret);
  const edited: Webhook = {
    ...rest,
    url: change.url ?? hook.url,
    contentType: change.contentType ?? hook.contentType,
    insecureSsl: change.insecureSsl ?? hook.insecureSsl,
    events: [...new Set(events)],
    active: input.active ?? hook.active,
    ...(sealedSecret ? { sealedSecret } : {}),
    updatedAt: new Date().toISOString(),
  };
  if (!(await replaceWebhook(edited))) throw notFound();
  return edited;
}

/**
 * DELETE …/hooks/{id}: the hook, then its deliveries (none can be added once the hook is gone).
 * A hook with more deliveries than one request deletes keeps the rest, unreachable, until the TTL.
 */
export async function removeHook(repository: Repository, id: number): Promise<void> {
  const { ownerLogin: owner, name: repo } = repository;
  if (!(await deleteWebhook(owner, repo, id))) throw notFound();
  const { deleted, left } = await deleteDeliveries(owner, repo, id);
  if (left) log('warn', 'webhook deliveries left to the TTL', { owner, repo, hookId: id, deleted });
}
