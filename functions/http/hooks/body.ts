import * as z from 'zod/mini';
import type { HookInput } from '#services/webhooks';

/** The `config` of a create or an edit; `insecure_ssl` as GitHub takes it, a string or a number. */
const hookConfig = z.object({
  url: z.optional(z.string().check(z.maxLength(2048))),
  content_type: z.optional(z.enum(['json', 'form'])),
  secret: z.optional(z.string().check(z.maxLength(1024))),
  insecure_ssl: z.optional(z.union([z.enum(['0', '1']), z.literal(0), z.literal(1)])),
});
const events = z.array(z.string().check(z.maxLength(64))).check(z.maxLength(100));

export const createBody = z.object({
  name: z.optional(z.literal('web')),
  config: z.object({ ...hookConfig.shape, url: z.string().check(z.maxLength(2048)) }),
  events: z.optional(events),
  active: z.optional(z.boolean()),
});

export const editBody = z.object({
  config: z.optional(hookConfig),
  events: z.optional(events),
  add_events: z.optional(events),
  remove_events: z.optional(events),
  active: z.optional(z.boolean()),
});

type EditBody = z.infer<typeof editBody>;

/** The body in the service's words. */
export function hookInput(body: EditBody): HookInput {
  const config = body.config;
  return {
    ...(config
      ? {
          config: {
            ...(config.url !== undefined ? { url: config.url } : {}),
            ...(config.content_type ? { contentType: config.content_type } : {}),
            ...(config.secret !== undefined ? { secret: config.secret } : {}),
            ...(config.insecure_ssl !== undefined
              ? { insecureSsl: String(config.insecure_ssl) === '1' ? '1' : '0' }
              : {}),
          },
        }
      : {}),
    ...(body.events ? { events: body.events } : {}),
    ...(body.add_events ? { addEvents: body.add_events } : {}),
    ...(body.remove_events ? { removeEvents: body.remove_events } : {}),
    ...(body.active !== undefined ? { active: body.active } : {}),
  };
}
