/**
 * A minimal browser stand-in for page tests and the benchmark over HTTP: keeps cookies, reads the CSRF token from
 * the last page's forms, submits forms, and never follows redirects (tests assert them).
 */
export class WebClient {
  private readonly cookies = new Map<string, string>();
  lastHtml = '';

  constructor(readonly origin: string) {}

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attributes.some((a) => /^\s*max-age=0$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size > 0 ? { Cookie: [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ') } : {};
  }

  async get(path: string): Promise<Response> {
    const response = await fetch(new URL(path, this.origin), {
      headers: this.cookieHeader(),
      redirect: 'manual',
    });
    this.remember(response);
    if ((response.headers.get('content-type') ?? '').startsWith('text/html'))
      this.lastHtml = await response.clone().text();
    return response;
  }

  /** The CSRF token of the last page's forms. */
  csrf(): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(this.lastHtml);
    if (!match?.[1]) throw new Error('no CSRF field on the last page');
    return match[1];
  }

  async post(
    path: string,
    fields: Record<string, string | string[]>,
    options: { csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const body = new URLSearchParams();
    const token = options.csrf === undefined ? this.csrf() : options.csrf;
    if (token !== null) body.append('_csrf', token);
    for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(name, v);
    return this.send(path, body, { 'Content-Type': 'application/x-www-form-urlencoded', ...options.headers });
  }

  /**
   * A POST of any body: a `FormData` (multipart/form-data, its boundary set by fetch; the caller
   * adds `_csrf`), raw bytes with their Content-Type, or a stream (sent chunked, without
   * Content-Length).
   */
  async postBody(
    path: string,
    body: FormData | Uint8Array | ReadableStream<Uint8Array>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return this.send(path, body, headers);
  }

  private async send(
    path: string,
    body: RequestInit['body'],
    headers: Record<string, string>,
  ): Promise<Response> {
    const response = await fetch(new URL(path, this.origin), {
      method: 'POST',
      body,
      headers: { ...this.cookieHeader(), ...headers },
      redirect: 'manual',
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as RequestInit);
    this.remember(response);
    if ((response.headers.get('content-type') ?? '').startsWith('text/html'))
      this.lastHtml = await response.clone().text();
    return response;
  }
}
