import type { Repository } from '#domain/repositories';
import type { Webhook } from '#domain/webhooks';
import type { Caller } from '#services/authenticate';
import { hookedRepository, repositoryHook } from '#services/webhooks';
import { requiresAuthentication } from '#shared/errors';

/** The repository and the hook a `…/hooks/{hook_id}` path names, for the owner only (else 404). */
export async function targetHook(
  caller: Caller,
  params: Readonly<Record<string, string>>,
): Promise<{ repository: Repository; hook: Webhook }> {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const repository = await hookedRepository(caller.user.login, params.owner ?? '', params.repo ?? '');
  return { repository, hook: await repositoryHook(repository, Number(params.hook_id)) };
}
