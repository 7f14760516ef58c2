/** One HTTP request of a smoke check, and what came back (or why nothing did). */

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

export type Probe =
  | ({ readonly answered: true } & Answer)
  | { readonly answered: false; readonly reason: string };

/**
 * One GET with a deadline covering the body too. Redirects are not followed: the distribution
 * redirects http to https, and the check should say so rather than quietly test another URL.
 */
export async function probe(url: URL, headers: Record<string, string>, timeoutMs: number): Promise<Probe> {
  try {
    const response = await fetch(url, {
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    return {
      answered: true,
      status: response.status,
      headers: response.headers,
      body: await response.text(),
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${timeoutMs / 1000} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { answered: false, reason };
  }
}

/** The body as JSON, or undefined when it is not. */
export function jsonOf(answer: Answer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(answer.body);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** CloudFront marks the errors it answers itself (its origin never answered) in `X-Cache`. */
export const fromCloudFront = (answer: Answer): boolean =>
  /error from cloudfront/i.test(answer.headers.get('x-cache') ?? '');

/** `401 application/json {"message":…}`: enough of an answer to say what answered. */
export function summary(answer: Answer): string {
  const type = answer.headers.get('content-type')?.split(';')[0] ?? 'no content type';
  const location = answer.headers.get('location');
  const text = answer.body.replace(/\s+/g, ' ').trim();
  const body = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return [answer.status, type, location ? `to ${location}` : body].filter(Boolean).join(' ');
}
