/**
 * What a person's imports put in their security log: an import started, authors mapped (one, or a
 * file), following the origin started, the cut-over. Each is recorded after the writes it is
 * about (several transactions, or a transaction shared with the workflow's guard) and named by
 * what makes it that action, so that doing it again records nothing new.
 */
import type { Import } from '#domain/imports';
import { recordSecurityEvent } from './security-log.ts';

const repositoryOf = (record: Pick<Import, 'ownerLogin' | 'repoName'>): string =>
  `${record.ownerLogin}/${record.repoName}`;

/** An import began (once per import: its id is never reused). */
export const recordImportStarted = (record: Import): Promise<void> =>
  recordSecurityEvent({
    kind: 'importStarted',
    login: record.ownerLogin,
    identity: [record.importId],
    subject: { repository: repositoryOf(record), ...(record.vcs ? { detail: record.vcs } : {}) },
    // A batch's queued import is started by its queue, after the request that asked for it.
    otherwise: { kind: 'service' },
  });

/**
 * An author mapped to a new name or email: named by the import's mapping count as read before
 * the change and by the values, so one change is one event.
 */
export const recordAuthorMapped = (
  record: Import,
  author: { readonly id: number; readonly name: string; readonly email: string },
): Promise<void> =>
  recordSecurityEvent({
    kind: 'authorMapped',
    login: record.ownerLogin,
    identity: [record.importId, author.id, record.mappingVersion ?? 0, author.name, author.email],
    subject: { repository: repositoryOf(record), author },
  });

/** An authors file that changed `changed` authors (a file that changes none records nothing). */
export const recordAuthorsFileApplied = (record: Import, changed: number): Promise<void> =>
  recordSecurityEvent({
    kind: 'authorsFileApplied',
    login: record.ownerLogin,
    identity: [record.importId, record.mappingVersion ?? 0, changed],
    subject: { repository: repositoryOf(record), count: changed },
  });

/**
 * Following the origin began, or the cut-over ended it: each once per import (a cut-over is
 * final, and the next import has a new id).
 */
export const recordFollowing = (kind: 'followStarted' | 'cutOver', record: Import): Promise<void> =>
  recordSecurityEvent({
    kind,
    login: record.ownerLogin,
    identity: [record.importId],
    subject: { repository: repositoryOf(record) },
    otherwise: { kind: 'service' },
  });
