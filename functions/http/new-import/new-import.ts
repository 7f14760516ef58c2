import type { User } from '#domain/users';
import { type WebReply, type WebRequest, webHandler } from '#http/middleware/web-stack';
import { pathTo } from '#shared/routes';

/**
 * An import form route. Signed-out visitors sign in and come back to the form (a POST, which has
 * no page of its own to come back to, comes back to the form too).
 */
export function newImportHandler(run: (request: WebRequest, user: User) => Promise<WebReply>) {
  return webHandler(async (request) => {
    if (request.user) return run(request, request.user);
    const get = request.method === 'GET';
    const target = get ? request.event.path : pathTo('new-import/form');
    return { location: `/login?return_to=${encodeURIComponent(target)}`, status: get ? 302 : 303 };
  });
}
