import type { Authorization } from '#domain/authorizations';
import { appDirectory } from '#services/apps';
import { config } from '#shared/config';
import type { PublicUrls } from '#shared/urls';
import type { AppDirectory } from '../json/authorization.ts';

/** What `authorizationJson` needs besides the authorization: the apps' names, in one BatchGetItem. */
export async function jsonContext(
  authorizations: readonly Pick<Authorization, 'clientId'>[],
  urls: PublicUrls,
) {
  const apps: AppDirectory = await appDirectory(authorizations.map((a) => a.clientId));
  return { urls, apps, docsUrl: config().docsUrl };
}
