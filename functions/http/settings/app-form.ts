import { isAcceptableAppUrl } from '#domain/apps';
import type { FieldError } from '#shared/errors';
import { APP_NAME_MAX, APP_URL_MAX } from './format.ts';

/** What the "Register a new application" form sends, trimmed. */
export interface AppInput {
  readonly name: string;
  readonly url: string;
  readonly callbackUrl: string;
  /** The "Expire user authorization tokens" checkbox. */
  readonly expireUserTokens: boolean;
}

const RESOURCE = 'OAuthApp';

export const readAppInput = (form: URLSearchParams): AppInput => ({
  name: (form.get('name') ?? '').trim(),
  url: (form.get('url') ?? '').trim(),
  callbackUrl: (form.get('callback_url') ?? '').trim(),
  expireUserTokens: readExpireUserTokens(form),
});

/** An HTML checkbox is sent only when ticked. */
export const readExpireUserTokens = (form: URLSearchParams): boolean => form.has('expire_user_tokens');

/** The form's errors, one per field at most, in form order; none means the app can be registered. */
export function appInputErrors(input: AppInput): FieldError[] {
  const errors: FieldError[] = [];
  if (!input.name) errors.push({ resource: RESOURCE, field: 'name', code: 'missing_field' });
  else if (input.name.length > APP_NAME_MAX)
    errors.push({ resource: RESOURCE, field: 'name', code: 'invalid' });
  for (const [field, value] of [
    ['url', input.url],
    ['callback_url', input.callbackUrl],
  ] as const) {
    if (!value) errors.push({ resource: RESOURCE, field, code: 'missing_field' });
    else if (value.length > APP_URL_MAX || !isAcceptableAppUrl(value))
      errors.push({ resource: RESOURCE, field, code: 'invalid' });
  }
  return errors;
}
