import { linkHeader, pageOf, pageRequest } from '#domain/pagination';
import type { Reply } from './http-stack.ts';

/**
 * A 200 with one page of `all` (per the request's `page`/`per_page`) rendered by `render`, and the
 * `Link` header pointing at `url`'s other pages when there are any.
 */
export async function pagedReply<T>(
  all: readonly T[],
  query: Readonly<Record<string, string | undefined>>,
  url: string,
  render: (items: T[]) => unknown[] | Promise<unknown[]>,
): Promise<Reply> {
  const page = pageRequest(query);
  const link = linkHeader(url, all.length, page);
  return { status: 200, body: await render(pageOf(all, page)), ...(link ? { headers: { Link: link } } : {}) };
}
