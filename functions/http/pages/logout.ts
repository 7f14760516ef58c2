import { sessionCookie, webHandler } from '#http/middleware/web-stack';
import { deleteSession } from '#services/sessions';

/** POST /logout: ends the session on the server and clears the cookie. */
export const handler = webHandler(async (request) => {
  const session = request.session ?? request.pending;
  if (session) await deleteSession(session.idHash);
  return { location: '/login', status: 303, cookies: [sessionCookie('', request.secure, 0)] };
});
