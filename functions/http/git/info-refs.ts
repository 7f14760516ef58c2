import { smartHttpHandler } from './smart-http.ts';

/** GET /:owner/:repo.git/info/refs?service=…: the ref advertisement (a push's needs write access). */
export const handler = smartHttpHandler('/info/refs');
