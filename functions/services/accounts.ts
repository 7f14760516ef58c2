/** User accounts: signing up (the web page) and creating users (the admin CLI) alike. */
import { createUser, getUser } from '#data/users';
import { hashPassword } from '#domain/passwords';
import type { User } from '#domain/users';

export interface NewAccount {
  readonly login: string;
  readonly password: string;
  readonly email?: string | undefined;
  readonly publicEmail?: boolean | undefined;
  readonly name?: string | undefined;
  readonly siteAdmin?: boolean | undefined;
}

/**
 * Creates an account, its password stored only as a slow hash; undefined when the login is taken
 * (case-insensitively). The caller has checked the login and password rules, to word its refusal.
 */
export async function createAccount(input: NewAccount): Promise<User | undefined> {
  const { password, ...profile } = input;
  return (await createUser({ ...profile, passwordHash: await hashPassword(password) })) ?? undefined;
}

/** The user with this login, if there is one. */
export const userNamed = (login: string): Promise<User | undefined> => getUser(login);
