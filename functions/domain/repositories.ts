import { foldAsciiCase, sameAsciiCaseless } from './ascii-case.ts';
/** A repository hosted by the service. */
export interface Repository {
  readonly id: number;
  readonly ownerLogin: string;
  readonly name: string;
  readonly description: string | null;
  readonly homepage: string | null;
  readonly private: boolean;
  readonly defaultBranch: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Last push; a new repository's is its creation time, as on GitHub. */
  readonly pushedAt: string;
  /** Size of the hosted git data in KiB (GitHub's unit); 0 while the repository is empty. */
  readonly size: number;
  /** Whether the hosted repository has any commit (an import needs an empty one). */
  readonly hasContent: boolean;
}

/**
 * GitHub's repository name rule: 1-100 of letters, digits, `.`, `-`, `_`; `.` and `..` are
 * reserved, and a `.git` suffix would be ambiguous in clone URLs.
 */
export function isValidRepositoryName(name: string): boolean {
  return (
    /^[A-Za-z0-9._-]{1,100}$/.test(name) &&
    name !== '.' &&
    name !== '..' &&
    !foldAsciiCase(name).endsWith('.git')
  );
}

/** Who may see a repository: everyone for public ones, the owner for private ones. */
export function canRead(repository: Repository, login: string | undefined): boolean {
  return !repository.private || (login !== undefined && sameAsciiCaseless(login, repository.ownerLogin));
}
