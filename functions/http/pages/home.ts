import { webHandler } from '#http/middleware/web-stack';
import { repositoryOverview } from '#services/repository-overview';
import { homePage, welcomePage } from './home-views.ts';

/** GET /?after=: the signed-in person's repositories and their imports; signed out, sign in or sign up. */
export const handler = webHandler(async (request) => {
  if (!request.user) return welcomePage();
  const after = request.query.after || undefined;
  return homePage(await repositoryOverview(request.user, after), after);
});
