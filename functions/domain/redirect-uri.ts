/**
 * The redirect URL rule of the OAuth web flow (spec §5.6, github-behaviour §3.2). A `redirect_uri`
 * is accepted only when it lands inside the registered callback: same scheme, host and port, and
 * a path equal to the callback's or below it segment by segment (`/path/sub`, never `/path2`).
 *
 * One exception, RFC 8252 §7.3 and GitHub's rule for native apps: when the callback is an `http`
 * loopback address (`127.0.0.1`, `[::1]` or `localhost`), the port is not compared, since a native
 * app listens on whatever port the system gives it. Scheme, host and path are still compared as
 * above; an `https` loopback callback keeps its port (nothing ephemeral listens with a
 * certificate), and the host must be the callback's own loopback name, not another one.
 *
 * Both URLs are compared after WHATWG URL parsing, which is how browsers will follow the redirect.
 * Inputs that a parser could read differently from a browser or a server behind the callback are
 * refused before parsing rather than normalized: backslashes, userinfo, fragments, whitespace and
 * control characters, dot segments (plain or percent-encoded) and encoded slashes in the path.
 */

/** Longer values are refused: they would only ever be abuse, and the code item stores the value. */
export const MAX_REDIRECT_URI_LENGTH = 2048;

export type RedirectCheck =
  | {
      readonly ok: true;
      /** Where to send the user: the normalized `redirect_uri`, or the callback when none was given. */
      readonly target: string;
      /** The normalized `redirect_uri` as given (bound to the code), or null when none was given. */
      readonly redirectUri: string | null;
    }
  | { readonly ok: false };

/** scheme `://` authority, then the raw path (up to `?` or `#`). */
const HIERARCHICAL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)([^?#]*)/;
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;
const ENCODED_SEPARATOR = /%(?:2f|5c)/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const UNSAFE_CHARACTERS = /[\u0000-\u0020\u007f\\#]/;

/** True when the raw text is free of everything a parser might resolve differently. */
function isPlainAbsoluteUrl(raw: string): boolean {
  if (raw.length > MAX_REDIRECT_URI_LENGTH || UNSAFE_CHARACTERS.test(raw)) return false;
  const match = HIERARCHICAL.exec(raw);
  if (!match) return false;
  const [, authority = '', path = ''] = match;
  if (authority.includes('@')) return false;
  if (ENCODED_SEPARATOR.test(path)) return false;
  return !path.split('/').some((segment) => DOT_SEGMENT.test(segment));
}

function parse(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/** Hosts (as WHATWG serializes them) whose `http` callbacks match a redirect on any port. */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Same scheme and host; the same port too, unless the callback is an `http` loopback address. */
function sameOrigin(url: URL, callback: URL): boolean {
  if (url.protocol !== callback.protocol) return false;
  if (url.host === callback.host) return true;
  return (
    callback.protocol === 'http:' &&
    LOOPBACK_HOSTS.has(callback.hostname) &&
    url.hostname === callback.hostname
  );
}

/** `/path` itself or a segment-wise sub-path of it; `/` contains every path. */
function isWithin(path: string, base: string): boolean {
  if (path === base) return true;
  const prefix = base.endsWith('/') ? base : `${base}/`;
  return path.startsWith(prefix);
}

/**
 * Checks a `redirect_uri` (absent or empty: the callback is used) against the application's
 * registered callback URL.
 */
export function checkRedirectUri(requested: string | null | undefined, callbackUrl: string): RedirectCheck {
  const callback = parse(callbackUrl);
  if (!callback) return { ok: false };
  if (requested === undefined || requested === null || requested === '')
    return { ok: true, target: callback.href, redirectUri: null };
  if (!isPlainAbsoluteUrl(requested)) return { ok: false };
  const url = parse(requested);
  if (!url || url.username || url.password || url.hash) return { ok: false };
  if (!sameOrigin(url, callback) || !isWithin(url.pathname, callback.pathname)) return { ok: false };
  return { ok: true, target: url.href, redirectUri: url.href };
}

/**
 * The token endpoint's rule: the `redirect_uri` sent with the code must be the one the code was
 * issued for; a code issued without one accepts none, or any that passes the rule above.
 */
export function exchangeRedirectMatches(
  sent: string | null | undefined,
  boundToCode: string | null,
  callbackUrl: string,
): boolean {
  const check = checkRedirectUri(sent, callbackUrl);
  if (boundToCode === null) return check.ok;
  return check.ok && check.redirectUri === boundToCode;
}

/** `target` with query parameters appended (its own query, if any, is kept byte for byte). */
export function withQuery(
  target: string,
  params: Readonly<Record<string, string | null | undefined>>,
): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== null) query.append(name, value);
  const text = query.toString();
  if (text === '') return target;
  const separator = target.includes('?') ? (target.endsWith('?') || target.endsWith('&') ? '' : '&') : '?';
  return `${target}${separator}${text}`;
}

/**
 * A public client's rule (metadata document and dynamically registered clients): `redirect_uri`
 * is required and must be one of the listed URIs exactly, after the same refusals as above; only
 * an `http` loopback URI matches on any port (RFC 8252 §7.3), with the same host, path and query.
 */
export function checkListedRedirectUri(
  requested: string | null | undefined,
  listed: readonly string[],
): RedirectCheck {
  if (!requested || !isPlainAbsoluteUrl(requested)) return { ok: false };
  const url = parse(requested);
  if (!url || url.username || url.password || url.hash) return { ok: false };
  const matches = listed.some((entry) => {
    const allowed = parse(entry);
    if (!allowed) return false;
    if (allowed.href === url.href) return true;
    return (
      allowed.protocol === 'http:' &&
      LOOPBACK_HOSTS.has(allowed.hostname) &&
      url.protocol === 'http:' &&
      url.hostname === allowed.hostname &&
      url.pathname === allowed.pathname &&
      url.search === allowed.search
    );
  });
  return matches ? { ok: true, target: url.href, redirectUri: url.href } : { ok: false };
}
