import { createHmac } from 'node:crypto';

/**
 * Repository webhooks as GitHub has them: a hook posts an event's payload to its URL, signed with
 * its secret. Pure rules here: the body as sent, the signature, the headers, a delivery's status.
 */

export type HookContentType = 'json' | 'form';

/** What a hook's last delivery got (GitHub's `last_response`). */
export interface HookResponse {
  readonly code: number | null;
  readonly status: string;
  readonly message: string | null;
}

export interface Webhook {
  readonly id: number;
  readonly owner: string;
  readonly repo: string;
  readonly url: string;
  readonly contentType: HookContentType;
  /** `0` (verify TLS) or `1`; as GitHub, a string. */
  readonly insecureSsl: '0' | '1';
  readonly events: readonly string[];
  readonly active: boolean;
  /** The secret, sealed (`domain/sealed-secrets.ts`); absent when the hook has none. Never shown. */
  readonly sealedSecret?: string;
  readonly lastResponse: HookResponse;
  /** The API's and the web's public roots when the hook was made: the payloads' URLs. */
  readonly apiUrl: string;
  readonly webUrl: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A new hook's `last_response`, GitHub's. */
export const UNUSED_RESPONSE: HookResponse = { code: null, status: 'unused', message: null };

/** Events the service sends (`ping` always, whatever `events` says). GitHub's default is `push`. */
export const DEFAULT_EVENTS: readonly string[] = ['push'];

/** GitHub's event names are lower-case words with underscores; `*` is every event. */
export const isEventName = (name: string): boolean => name === '*' || /^[a-z][a-z_]{0,63}$/.test(name);

export const subscribes = (hook: Pick<Webhook, 'events' | 'active'>, event: string): boolean =>
  event === 'ping' || (hook.active && (hook.events.includes('*') || hook.events.includes(event)));

/** How GitHub shows a secret that is set. */
export const MASKED_SECRET = '********';

/** Bodies of requests and responses kept with a delivery, at most (the rest is cut). */
export const MAX_RECORDED_BODY_BYTES = 64 * 1024;
/** A delivery gives up after this long (GitHub's 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** The body as posted: JSON, or a form with the JSON in `payload`. */
export function deliveryBody(contentType: HookContentType, payload: unknown): string {
  const json = JSON.stringify(payload);
  return contentType === 'json' ? json : `payload=${encodeURIComponent(json)}`;
}

export const contentTypeHeader = (contentType: HookContentType): string =>
  contentType === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';

/** `X-Hub-Signature-256`: the HMAC-SHA256 of the exact body under the secret, hex. */
export const signature256 = (secret: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** The headers of a delivery (GitHub's names and User-Agent). The secret itself is never among them. */
export function deliveryHeaders(input: {
  readonly hookId: number;
  readonly guid: string;
  readonly event: string;
  readonly contentType: HookContentType;
  readonly body: string;
  readonly secret?: string;
}): Record<string, string> {
  return {
    Accept: '*/*',
    'Content-Type': contentTypeHeader(input.contentType),
    'User-Agent': `GitHub-Hookshot/${input.hookId.toString(16).padStart(7, '0')}`,
    'X-GitHub-Event': input.event,
    'X-GitHub-Delivery': input.guid,
    'X-GitHub-Hook-ID': String(input.hookId),
    'X-GitHub-Hook-Installation-Target-Type': 'repository',
    ...(input.secret ? { 'X-Hub-Signature-256': signature256(input.secret, input.body) } : {}),
  };
}

/** A recorded attempt to deliver an event to a hook (GitHub's `hook-delivery`). */
export interface HookDelivery {
  readonly id: number;
  readonly guid: string;
  readonly hookId: number;
  readonly event: string;
  readonly action: string | null;
  readonly redelivery: boolean;
  readonly deliveredAt: string;
  /** Seconds, as GitHub. */
  readonly duration: number;
  /** `OK`, `Invalid HTTP Response: 503`, or why nothing was answered. */
  readonly status: string;
  /** 0 when nothing was answered. */
  readonly statusCode: number;
  readonly repositoryId: number;
  readonly url: string;
  readonly request: { readonly headers: Record<string, string>; readonly payload: unknown };
  readonly response: { readonly headers: Record<string, string>; readonly payload: string | null };
}

/** GitHub's delivery status for an HTTP answer. */
export const statusOfCode = (code: number): string =>
  code >= 200 && code < 300 ? 'OK' : `Invalid HTTP Response: ${code}`;

/**
 * The network guard's error text, written for import origins, as a delivery status: the word
 * "origin" becomes "receiver", but never inside a host name, URL or other word (`origin.lab`,
 * `my-origin`, `https://origin/`), which must read as the hook's URL says.
 */
export const receiverWording = (message: string): string =>
  message.replace(/(?<![\w.\-/:@])([Oo])rigin(?![\w\-/:@]|\.[\w-])/g, (_word, initial: string) =>
    initial === 'O' ? 'Receiver' : 'receiver',
  );

export const delivered = (delivery: Pick<HookDelivery, 'statusCode'>): boolean =>
  delivery.statusCode >= 200 && delivery.statusCode < 300;

/** Cuts a body to `MAX_RECORDED_BODY_BYTES` (UTF-8), so an item stays far below DynamoDB's 400 KB. */
export function boundedBody(body: string): string {
  const bytes = Buffer.from(body);
  return bytes.length <= MAX_RECORDED_BODY_BYTES
    ? body
    : bytes.subarray(0, MAX_RECORDED_BODY_BYTES).toString('utf8');
}

/**
 * Redeliveries by hand (`POST …/deliveries/{id}/attempts`) of one hook in a fixed window: each
 * one posts the payload to the receiver again (up to `DELIVERY_TIMEOUT_MS` of a function's time,
 * and retries), so a script cannot turn the service into a flood of one receiver.
 */
export const REDELIVERIES_PER_WINDOW = 20;
export const REDELIVERY_WINDOW_SECONDS = 600;
