import { linkHeader, type Page, type PageRequest, pageOf, pageRequest } from '#domain/pagination';
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
  return pageReply({ items: pageOf(all, page), total: all.length }, page, url, render);
}

/**
 * The same answer for a list the data layer read one page of (`page.items` is already the page
 * `request` asks for, `page.total` the whole list's length).
 */
export async function pageReply<T>(
  page: Page<T>,
  request: PageRequest,
  url: string,
  render: (items: T[]) => unknown[] | Promise<unknown[]>,
): Promise<Reply> {
  const link = linkHeader(url, page.total, request);
  return { status: 200, body: await render(page.items), ...(link ? { headers: { Link: link } } : {}) };
}
