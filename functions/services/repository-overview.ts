/**
 * The home page's list (issue 37): a person's repositories, each with its import's status and
 * whether it follows its origin. One Query of the owner's repositories (GSI1), then BatchGetItem
 * for their imports and for those imports' sync items: three round trips for a page, whatever its
 * length, never one read per repository.
 */
import { importsOf } from '#data/imports/items';
import { syncStatesOf } from '#data/imports/sync';
import { pageOfRepositories } from '#data/repositories';
import type { SyncState } from '#domain/import-sync';
import type { Import } from '#domain/imports';
import type { Repository } from '#domain/repositories';
import type { User } from '#domain/users';

/** Repositories the home page lists at once; `after` pages on by name. */
export const OVERVIEW_PAGE_SIZE = 100;

export interface RepositoryOverview {
  readonly repository: Repository;
  /** Absent: the repository has no import. */
  readonly record?: Import;
  /** `off` without an import or before following began. */
  readonly following: SyncState;
}

export interface OverviewPage {
  readonly entries: readonly RepositoryOverview[];
  /** The name to page on after (`?after=`), when more follow. */
  readonly next?: string;
}

export async function repositoryOverview(owner: User, after?: string): Promise<OverviewPage> {
  const { repositories, more } = await pageOfRepositories(owner.login, OVERVIEW_PAGE_SIZE, after);
  const records = await importsOf(repositories);
  const present = records.filter((record): record is Import => record !== undefined);
  const states = await syncStatesOf(present);
  const stateOf = new Map(present.map((record, index) => [record, states[index] ?? 'off']));
  const entries = repositories.map((repository, index) => {
    const record = records[index];
    return record
      ? { repository, record, following: stateOf.get(record) ?? 'off' }
      : { repository, following: 'off' as const };
  });
  const last = repositories.at(-1);
  return more && last ? { entries, next: last.name } : { entries };
}
