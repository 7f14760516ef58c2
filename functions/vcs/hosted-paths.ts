/**
 * Where the service keeps what it hosts: one bare Git repository per repository, with its Git LFS
 * objects inside it in git-lfs's own layout, so `git lfs` tools work on it directly. The one place
 * these paths are built (the importer writes there, the smart-HTTP and LFS routes read there).
 */
import { join } from 'node:path';
import { foldAsciiCase } from '#domain/ascii-case';

/** `<repositoriesDir>/<owner>/<repo>.git`, folded like the table's keys (names are case-insensitive). */
export const hostedRepositoryPath = (repositoriesDir: string, owner: string, repo: string): string =>
  join(repositoriesDir, foldAsciiCase(owner), `${foldAsciiCase(repo)}.git`);

/** An LFS object by its SHA-256 oid: `<repo>/lfs/objects/ab/cd/abcd…` (git-lfs's layout). */
export const lfsObjectPath = (repositoryPath: string, oid: string): string =>
  join(repositoryPath, 'lfs', 'objects', oid.slice(0, 2), oid.slice(2, 4), oid);

/** An LFS object's key in the S3 store: `<owner>/<repo>/<oid>`, folded like the repository's path. */
export const lfsObjectKey = (owner: string, repo: string, oid: string): string =>
  `${foldAsciiCase(owner)}/${foldAsciiCase(repo)}/${oid}`;

/** A valid LFS oid: 64 lower-case hex characters (SHA-256). */
export const isLfsOid = (oid: string): boolean => /^[0-9a-f]{64}$/.test(oid);

/** The working directory of one import attempt: `<importWorkDir>/<owner>/<repo>/<attempt>`. */
export const importAttemptDir = (
  importWorkDir: string,
  owner: string,
  repo: string,
  attempt: number,
): string => join(importWorkDir, foldAsciiCase(owner), foldAsciiCase(repo), String(attempt));

/** Every attempt of a repository's import (removed on cancel). */
export const importWorkRoot = (importWorkDir: string, owner: string, repo: string): string =>
  join(importWorkDir, foldAsciiCase(owner), foldAsciiCase(repo));
