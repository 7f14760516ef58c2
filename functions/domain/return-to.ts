/**
 * Where to go after signing in. The value a browser will follow is the one this returns, so that
 * is the value checked: the request's string is first resolved the way a browser resolves a
 * relative URL (dot segments, `%2e`, tabs and newlines removed, backslashes as slashes), and only
 * a same-site path that cannot be read as `//host` is returned.
 */
const SELF = 'http://self.invalid';

/** A path on this site a `Location` header can carry unchanged: no `//host`, `/\host`, no controls. */
export function isSitePath(path: string): boolean {
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(path);
}

/** `safeReturnTo` refuses these in the path: some servers and proxies decode them into slashes. */
const ENCODED_SEPARATOR = /%(2f|5c)/i;

export function safeReturnTo(value: string | null | undefined, fallback: string): string {
  // Controls, spaces and backslashes never occur in a path this site links to; refuse them raw.
  if (
    !value ||
    value.length > 2048 ||
    !value.startsWith('/') ||
    /[^\x21-\x5b\x5d-\x7e\u00a0-\uffff]/.test(value)
  )
    return fallback;
  let url: URL;
  try {
    url = new URL(value, SELF);
  } catch {
    return fallback;
  }
  if (url.origin !== SELF || ENCODED_SEPARATOR.test(url.pathname)) return fallback;
  const target = `${url.pathname}${url.search}`;
  return isSitePath(target) ? target : fallback;
}
