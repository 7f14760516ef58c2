/** Cookies as the web pages use them: parse the request's, write ours with safe attributes. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

export interface CookieOptions {
  readonly maxAgeSeconds?: number;
  /** Secure (and the `__Host-` prefix) when the site is served over https. */
  readonly secure: boolean;
}

/** The cookie's name on the wire: `__Host-` prefixed over https (host-only, path /, Secure). */
export const cookieName = (name: string, secure: boolean): string => (secure ? `__Host-${name}` : name);

/** HttpOnly, SameSite=Lax, Path=/, and Secure over https. `maxAgeSeconds: 0` deletes it. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${cookieName(name, options.secure)}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (options.secure) parts.push('Secure');
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  return parts.join('; ');
}
