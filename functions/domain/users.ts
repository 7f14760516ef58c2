/** A user account, as the domain sees it (no credential material). */
export interface User {
  readonly id: number;
  readonly login: string;
  readonly name: string | null;
  readonly email: string | null;
  readonly siteAdmin: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/**
 * GitHub's login rule: 1-39 characters, ASCII letters, digits and single hyphens, not starting or
 * ending with a hyphen.
 */
export function isValidLogin(login: string): boolean {
  return login.length <= 39 && /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9]))*$/.test(login);
}
