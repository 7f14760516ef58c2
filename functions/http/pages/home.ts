import { isValidRepositoryName } from '#domain/repositories';
import { webHandler } from '#http/middleware/web-stack';
import { repositoryOverview } from '#services/repository-overview';
import { homePage, welcomePage } from './home-views.ts';

/** GET /?after=: the signed-in person's repositories and their imports; signed out, sign in or sign up. */
export const handler = webHandler(async (request) => {
  if (!request.user) return welcomePage();
  // Only a name a repository may have pages on; anything else is the first page.
  const after =
    request.query.after && isValidRepositoryName(request.query.after) ? request.query.after : undefined;
  return homePage(await repositoryOverview(request.user, after), after);
});
