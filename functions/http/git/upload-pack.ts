import { smartHttpHandler } from './smart-http.ts';

/** POST /:owner/:repo.git/git-upload-pack: fetch and clone. */
export const handler = smartHttpHandler('/git-upload-pack');
