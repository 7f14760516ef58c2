/**
 * What a person's imports put in their security log: an import started, authors mapped (one, or a
 * file), following the origin started, the cut-over. One author's mapping is written in its
 * transaction; the others are recorded after the writes they are about (an import once its
 * execution started, several transactions, or none of its own), named by what makes each that
 * action, so that doing it again records nothing new.
 */
import type { Import } from '#domain/imports';
import type { SecurityEvent } from '#domain/security-log';
import { namedSecurityEvent, recordSecurityEvent } from './security-log.ts';

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
 * The event of an author mapped to a new name or email, for the mapping's transaction: named by the
 * import's mapping count as read before the change and by the values, so one change is one event.
 */
export const authorMappedEvent = (
  record: Import,
  author: { readonly id: number; readonly name: string; readonly email: string },
): Promise<SecurityEvent> =>
  namedSecurityEvent({
    kind: 'authorMapped',
    login: record.ownerLogin,
    identity: [record.importId, author.id, record.mappingVersion ?? 0, author.name, author.email],
    subject: {
      repository: repositoryOf(record),
      author: { id: author.id, name: author.name, email: author.email },
    },
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
