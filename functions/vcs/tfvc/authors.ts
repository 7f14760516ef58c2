/**
 * TFVC identities as Git identities. TFVC has display names and unique names (`DOMAIN\user`, or an
 * email on Azure DevOps). The Git email is the unique name when it is an email, else
 * `<user>@<collection host>` (`tfvc.invalid` when the host is an address): made up, valid, and
 * mappable afterwards.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gitRemoteId } from '#domain/imports';
import { rawRepository } from '#vcs/git';
import { gitAuthors } from '#vcs/git-authors';
import type { OriginAuthor, RawJob } from '#vcs/origin';
import { cursor, LISTING_FILE, type ListedChangeset, type TfvcIdentity } from './state.ts';

const EMAIL = /^[^\s<>@\\]+@[^\s<>@\\]+\.[^\s<>@\\]+$/;

/** The Git name and email of a TFVC identity (see the module comment). */
export function gitIdentity(person: TfvcIdentity, host: string): { name: string; email: string } {
  const name =
    (person.displayName || person.uniqueName || 'Unknown').replace(/[<>\n\r\0]/g, '').trim() || 'Unknown';
  if (EMAIL.test(person.uniqueName)) return { name, email: person.uniqueName };
  const user = (person.uniqueName.split('\\').at(-1) || name)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  const domain = /[a-z]/i.test(host) && !host.includes(':') ? host.toLowerCase() : 'tfvc.invalid';
  return { name, email: `${user || 'user'}@${domain}` };
}

/** The authors raw.git holds so far, each named by its TFVC unique name where the listing knows it. */
export async function tfvcAuthors(job: RawJob, seen?: readonly string[]): Promise<readonly OriginAuthor[]> {
  const raw = await rawRepository(job);
  if (!raw) return [];
  const state = await cursor.load(job.workDir);
  let listing: ListedChangeset[] = [];
  try {
    listing = JSON.parse(await readFile(join(job.workDir, LISTING_FILE), 'utf8')) as ListedChangeset[];
  } catch {
    // nothing listed yet
  }
  const host = state.collection ? new URL(state.collection).hostname : '';
  const uniqueNames = new Map<string, string>();
  for (const changeset of listing)
    for (const person of [changeset.author, changeset.committer]) {
      const identity = gitIdentity(person, host);
      uniqueNames.set(gitRemoteId(identity.name, identity.email), person.uniqueName || person.displayName);
    }
  return (await gitAuthors(raw.repo, raw.home, seen)).map(
    (author): OriginAuthor => ({
      ...author,
      remoteName: uniqueNames.get(author.remoteId) ?? author.remoteName,
    }),
  );
}
