import { nameAvailability } from '#services/new-import';
import { newImportHandler } from './new-import.ts';

/**
 * GET /new/import/name?name=: whether the signed-in person may name a new repository so, as JSON
 * `{available, message}` for the form's script (the form itself never needs it).
 */
export const handler = newImportHandler(async (request, user) => ({
  json: await nameAvailability(user, request.query.name ?? ''),
}));
