import { createForUser, personalTokensOf } from '#services/authorizations';
import type { FieldError } from '#shared/errors';
import { RESOURCE } from '../authorizations/fields.ts';
import { NOTE_MAX } from './format.ts';
import { orFieldErrors, paths, settingsHandler } from './settings-page.ts';
import { tokensPage } from './tokens-views.ts';

/**
 * POST /settings/tokens: a personal access token, made exactly as `POST /authorizations` makes one.
 * The answer is the tokens page showing the token this once; refusals keep what the user typed.
 */
export const handler = settingsHandler(paths.tokens, async (request, user) => {
  const input = {
    note: (request.form.get('note') ?? '').trim(),
    scopes: [...new Set(request.form.getAll('scopes'))],
  };
  const refuse = async (errors: readonly FieldError[]) =>
    tokensPage(request, await personalTokensOf(user.login), Date.now(), { status: 422, errors, input });
  if (!input.note) return refuse([{ resource: RESOURCE, field: 'note', code: 'missing_field' }]);
  if (input.note.length > NOTE_MAX) return refuse([{ resource: RESOURCE, field: 'note', code: 'invalid' }]);
  const result = await orFieldErrors(createForUser(user.login, input));
  if ('errors' in result) return refuse(result.errors);
  return tokensPage(request, await personalTokensOf(user.login), Date.now(), {
    fresh: { ...result.ok, regenerated: false },
  });
});
