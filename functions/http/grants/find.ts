import { grantsOf, readUserAuthState } from '#data/authorizations';
import type { Grant } from '#domain/authorizations';
import type { Caller } from '#services/authenticate';
import { notFound } from '#shared/errors';
import { idParam } from '../authorizations/fields.ts';

/** The caller's grant with this id (grants are read with the authorizations that make them up). */
export async function findGrant(caller: Caller, grantId: string | undefined): Promise<Grant> {
  const id = idParam(grantId);
  if (caller.kind !== 'user' || id === undefined) throw notFound();
  const grant = grantsOf(await readUserAuthState(caller.user.login), caller.user.login).find(
    (g) => g.id === id,
  );
  if (!grant) throw notFound();
  return grant;
}
