/** A user account, as the domain sees it (no credential material). */
export interface User {
  readonly id: number;
  readonly login: string;
  readonly name: string | null;
  readonly email: string | null;
  /** Whether the user chose to show `email` on their public profile (default: private). */
  readonly publicEmail: boolean;
  readonly siteAdmin: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/**
 * What a profile shows beyond the account itself: the counts the service knows (it hosts
 * repositories, not gists, followers or collaborators) and whether two-factor is on.
 */
export interface UserStats {
  readonly publicRepos: number;
  readonly privateRepos: number;
  readonly twoFactor: boolean;
}

/** A user with what their profile shows. */
export interface Profile {
  readonly user: User;
  readonly stats: UserStats;
}

/** The address a profile shows to others: only one the user chose to make public (GitHub's rule). */
export function publicEmailOf(user: Pick<User, 'email' | 'publicEmail'>): string | null {
  return user.publicEmail ? user.email : null;
}

/**
 * GitHub's login rule: 1-39 characters, ASCII letters, digits and single hyphens, not starting or
 * ending with a hyphen.
 */
export function isValidLogin(login: string): boolean {
  return login.length <= 39 && /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9]))*$/.test(login);
}
