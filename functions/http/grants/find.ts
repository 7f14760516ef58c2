import type { Grant } from '#domain/authorizations';
import type { Caller } from '#services/authenticate';
import { grantById } from '#services/grants';
import { notFound } from '#shared/errors';
import { idParam } from '../authorizations/fields.ts';

/** The caller's grant with the id in the path; 404 otherwise. */
export async function findGrant(caller: Caller, grantId: string | undefined): Promise<Grant> {
  const id = idParam(grantId);
  if (caller.kind !== 'user' || id === undefined) throw notFound();
  return grantById(caller.user.login, id);
}
