import { MAX_VCS_PASSWORD_LENGTH, MAX_VCS_USERNAME_LENGTH } from './imports.ts';
import { checkOriginUrl } from './origin-url.ts';
import { isValidRepositoryName } from './repositories.ts';

/*
 * The import form (`/new/import`, issue 37): what a person fills in, and the rules each field must
 * meet before anything is made. Pure: the name's availability is the service's question.
 */

export interface NewImportInput {
  /** The old repository's URL. */
  readonly vcsUrl: string;
  /** Both or neither (empty strings are absent). */
  readonly vcsUsername?: string | undefined;
  readonly vcsPassword?: string | undefined;
  /** The new repository's name. */
  readonly name: string;
  readonly private: boolean;
}

/** The form's fields, as the page names its inputs and the problems beside them. */
export type NewImportField = 'vcs_url' | 'vcs_username' | 'vcs_password' | 'name';

export interface NewImportProblem {
  readonly field: NewImportField;
  readonly message: string;
}

export const NAME_RULE =
  'A name may have letters, digits, ".", "-" and "_" (at most 100 characters), and may not end in ".git".';

/** What is wrong with the new repository's name itself (undefined: nothing). */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'Enter a name for the new repository.';
  return isValidRepositoryName(name) ? undefined : NAME_RULE;
}

export const nameTaken = (name: string): string => `You already have a repository named ${name}.`;

/**
 * Every problem of the form at once, field by field: the name's rule, the URL through the same
 * origin URL check the import API applies (`allowed`: the importer's extra allowed addresses),
 * and credentials given as a pair within the API's lengths.
 */
export function newImportProblems(input: NewImportInput, allowed: readonly string[]): NewImportProblem[] {
  const problems: NewImportProblem[] = [];
  if (input.vcsUrl === '')
    problems.push({ field: 'vcs_url', message: 'Enter the URL of the repository to import.' });
  else {
    const url = checkOriginUrl(input.vcsUrl, null, allowed);
    // The check speaks to API clients (`vcs_url …`); the form's field is "the URL".
    if (!url.ok) problems.push({ field: 'vcs_url', message: url.message.replace(/^vcs_url\b/, 'This URL') });
  }
  const { vcsUsername: username, vcsPassword: password } = input;
  if (username !== undefined && password === undefined)
    problems.push({ field: 'vcs_password', message: 'Enter the password for this username.' });
  if (password !== undefined && username === undefined)
    problems.push({ field: 'vcs_username', message: 'Enter the username for this password.' });
  if (username !== undefined && username.length > MAX_VCS_USERNAME_LENGTH)
    problems.push({ field: 'vcs_username', message: `At most ${MAX_VCS_USERNAME_LENGTH} characters.` });
  if (password !== undefined && password.length > MAX_VCS_PASSWORD_LENGTH)
    problems.push({ field: 'vcs_password', message: `At most ${MAX_VCS_PASSWORD_LENGTH} characters.` });
  const name = nameProblem(input.name);
  if (name) problems.push({ field: 'name', message: name });
  return problems;
}
