/**
 * Logins and repository names are ASCII and compared case-insensitively. The fold touches A–Z
 * only: `toLowerCase()` also maps non-ASCII look-alikes onto ASCII letters (the Kelvin sign U+212A
 * onto `k`), letting `\u212Aate` name the account `kate`. With this fold such a name stays
 * distinct, and as it is not a valid login it never names an account.
 */
export const foldAsciiCase = (value: string): string =>
  value.replace(/[A-Z]/g, (letter) => String.fromCharCode(letter.charCodeAt(0) + 32));

/** Whether two logins (or repository names) are the same, ignoring ASCII case only. */
export const sameAsciiCaseless = (a: string, b: string): boolean => foldAsciiCase(a) === foldAsciiCase(b);
