/**
 * GitHub's cursor pagination (webhook deliveries): a list read newest first, one page per request,
 * `per_page` as for page numbers and `cursor` an opaque position that only the `Link` header's
 * `rel="next"` and `rel="prev"` hand out. A position is an item's id: the page after it (older
 * items) or the page before it (newer ones). Ids are numbers, so a cursor names no key of the
 * store and a forged one can only move within the list its URL names.
 */

/** Where a page starts: after an item (the older ones, the next page) or before it (the newer, the previous page). */
export type Position = { readonly after: number } | { readonly before: number };

/** The positions of the pages beside one page, when those pages hold anything. */
export interface Neighbours {
  readonly next?: Position;
  readonly prev?: Position;
}

const CURSOR = /^(after|before):([1-9]\d{0,15})$/;

/** The cursor of a position: opaque to clients (base64url). */
export function cursorOf(position: Position): string {
  const text = 'after' in position ? `after:${position.after}` : `before:${position.before}`;
  return Buffer.from(text).toString('base64url');
}

/** The position a cursor names; undefined when it is not one this service handed out. */
export function positionOf(cursor: string): Position | undefined {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return undefined;
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match) return undefined;
  const id = Number(match[2]);
  if (!Number.isSafeInteger(id)) return undefined;
  return match[1] === 'after' ? { after: id } : { before: id };
}

/**
 * The pages beside a page read from `from` (absent: the first page), whose ids are `ids` newest
 * first, and `more`: whether the store held another item beyond the page in the direction read.
 * Read forward (after an item, or from the start), the page before it exists when it was reached
 * by a cursor; read backward (before an item), the page after it always does (that item).
 */
export function neighboursOf(from: Position | undefined, ids: readonly number[], more: boolean): Neighbours {
  const newest = ids[0];
  const oldest = ids.at(-1);
  if (newest === undefined || oldest === undefined) return {};
  const next = { after: oldest };
  const prev = { before: newest };
  if (from && 'before' in from) return more ? { next, prev } : { next };
  if (from) return more ? { next, prev } : { prev };
  return more ? { next } : {};
}

/**
 * The `Link` header of a cursor-paged list at `url` (`next` first, as GitHub orders them), each
 * link with `per_page` and its `cursor`; undefined when neither neighbour exists.
 */
export function cursorLinkHeader(url: string, perPage: number, neighbours: Neighbours): string | undefined {
  const href = (position: Position) => {
    const target = new URL(url);
    target.searchParams.set('per_page', String(perPage));
    target.searchParams.set('cursor', cursorOf(position));
    return `<${target.toString()}>`;
  };
  const links: string[] = [];
  if (neighbours.next) links.push(`${href(neighbours.next)}; rel="next"`);
  if (neighbours.prev) links.push(`${href(neighbours.prev)}; rel="prev"`);
  return links.length > 0 ? links.join(', ') : undefined;
}
