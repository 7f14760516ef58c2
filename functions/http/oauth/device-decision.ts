import { webHandler } from '#http/middleware/web-stack';
import { decideUserCode } from '#services/device-flow';
import { donePage, entryPage, entryProblem, goneMessage, signInFirst } from './device-views.ts';

/**
 * POST /login/device/authorize (CSRF-checked by the stack): Authorize or Cancel for the code in
 * the hidden field, checked again from scratch. Cancel makes the device's next poll `access_denied`.
 */
export const handler = webHandler(async (request) => {
  if (!request.user) return signInFirst(request);
  const decision = request.form.get('decision');
  if (decision !== 'authorize' && decision !== 'cancel')
    return entryPage(request, { status: 400, error: 'Choose Authorize or Cancel.' });
  const typed = request.form.get('user_code') ?? '';
  const { entry, done } = await decideUserCode(
    request.user.login,
    typed,
    decision === 'authorize' ? 'approved' : 'denied',
  );
  if (entry.kind !== 'found') {
    const problem = entryProblem(entry);
    return entryPage(request, { status: problem.status, error: problem.message });
  }
  if (!done) return entryPage(request, { status: 409, error: goneMessage });
  return donePage(entry.app.name, decision === 'authorize');
});
