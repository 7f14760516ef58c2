import { apiHandler } from '#http/middleware/http-stack';
import { rootJson } from '../json/root.ts';

/**
 * GET / of the REST API (`{base_url}/`): GitHub's hypermedia root, to anyone. Clients call it to
 * check a host and a token (gh reads `X-OAuth-Scopes` from it); the stack checks credentials sent,
 * so a bad token is 401, and adds the scope headers to a token's answer.
 */
export const handler = apiHandler({}, async ({ urls }) => ({ status: 200, body: rootJson(urls) }));
