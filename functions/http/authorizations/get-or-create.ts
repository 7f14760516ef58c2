import { apiHandler } from '#http/middleware/http-stack';
import { RESOURCE } from './fields.ts';
import { getOrCreate, getOrCreateBody } from './get-or-create-body.ts';

/** PUT /authorizations/clients/:client_id */
export const handler = apiHandler({ body: { schema: getOrCreateBody, resource: RESOURCE } }, getOrCreate);
