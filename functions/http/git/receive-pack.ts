import { smartHttpHandler } from './smart-http.ts';

/** POST /:owner/:repo.git/git-receive-pack: a push by the owner, recorded on the repository. */
export const handler = smartHttpHandler('/git-receive-pack');
