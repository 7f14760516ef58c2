/**
 * GitHub's page-number pagination: `page` is 1-based, `per_page` defaults to 30 and is capped at
 * 100; out-of-range or malformed values fall back to the defaults, as GitHub does.
 */
export interface PageRequest {
  readonly page: number;
  readonly perPage: number;
  /** Whether the client sent `per_page` (then the links echo it). */
  readonly perPageGiven: boolean;
}

const DEFAULT_PER_PAGE = 30;
const MAX_PER_PAGE = 100;

function positiveInt(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const number = Number(value);
  return number >= 1 ? number : undefined;
}

export function pageRequest(query: Readonly<Record<string, string | undefined>>): PageRequest {
  const perPage = positiveInt(query.per_page);
  return {
    page: positiveInt(query.page) ?? 1,
    perPage: Math.min(perPage ?? DEFAULT_PER_PAGE, MAX_PER_PAGE),
    perPageGiven: perPage !== undefined,
  };
}

/** Where the requested page starts in the whole list (0-based). */
export const pageStart = (request: PageRequest): number => (request.page - 1) * request.perPage;

/** One page of a list read page by page, and the length of the whole list (for the links). */
export interface Page<T> {
  readonly items: T[];
  readonly total: number;
}

/** The items of the requested page. */
export function pageOf<T>(items: readonly T[], request: PageRequest): T[] {
  const start = pageStart(request);
  return items.slice(start, start + request.perPage);
}

/**
 * The `Link` header for a page of `total` items at `url`, in GitHub's order (next, last, first,
 * prev); undefined when everything fits on one page.
 */
export function linkHeader(url: string, total: number, request: PageRequest): string | undefined {
  const last = Math.max(1, Math.ceil(total / request.perPage));
  if (last === 1 && request.page === 1) return undefined;
  const href = (page: number) => {
    const target = new URL(url);
    target.searchParams.delete('page');
    target.searchParams.delete('per_page');
    if (request.perPageGiven) target.searchParams.set('per_page', String(request.perPage));
    target.searchParams.set('page', String(page));
    return `<${target.toString()}>`;
  };
  const links: string[] = [];
  if (request.page < last) links.push(`${href(request.page + 1)}; rel="next"`, `${href(last)}; rel="last"`);
  if (request.page > 1)
    links.push(`${href(1)}; rel="first"`, `${href(Math.min(request.page - 1, last))}; rel="prev"`);
  return links.length > 0 ? links.join(', ') : undefined;
}
