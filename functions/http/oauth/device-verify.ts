import { webHandler } from '#http/middleware/web-stack';
import { enterUserCode } from '#services/device-flow';
import { confirmPage, entryPage, entryProblem, signInFirst } from './device-views.ts';

/**
 * POST /login/device (CSRF-checked by the stack): the typed code. A pending code shows the
 * confirmation page; anything else counts against the user's wrong entries (see `enterUserCode`).
 */
export const handler = webHandler(async (request) => {
  if (!request.user) return signInFirst(request);
  const typed = request.form.get('user_code') ?? '';
  const entry = await enterUserCode(request.user.login, typed);
  if (entry.kind === 'found') return confirmPage(request, entry);
  const problem = entryProblem(entry);
  return entryPage(request, { status: problem.status, error: problem.message, code: typed.slice(0, 16) });
});
