import { describe, expect, it } from 'vitest';
import { cursorLinkHeader, cursorOf, neighboursOf, positionOf } from '#domain/cursor-pagination';

describe('cursor pagination (domain/cursor-pagination.ts)', () => {
  it('reads back the positions it hands out, and nothing else', () => {
    for (const position of [{ after: 1 }, { before: 42 }, { after: 2 ** 40 }])
      expect(positionOf(cursorOf(position))).toEqual(position);
    const forged = (text: string) => Buffer.from(text).toString('base64url');
    for (const cursor of [
      '',
      'not base64!',
      forged('after:0'),
      forged('after:-1'),
      forged('after:01'),
      forged('around:5'),
      forged('after:5 '),
      forged(`after:${'9'.repeat(17)}`),
      'x'.repeat(65),
    ])
      expect(positionOf(cursor), cursor).toBeUndefined();
  });

  it('links the next page forward, the previous one back, and only pages that hold something', () => {
    expect(neighboursOf(undefined, [9, 8], true)).toEqual({ next: { after: 8 } });
    expect(neighboursOf(undefined, [9, 8], false)).toEqual({});
    expect(neighboursOf({ after: 8 }, [7, 6], true)).toEqual({ next: { after: 6 }, prev: { before: 7 } });
    expect(neighboursOf({ after: 6 }, [5], false)).toEqual({ prev: { before: 5 } });
    expect(neighboursOf({ before: 5 }, [7, 6], true)).toEqual({ next: { after: 6 }, prev: { before: 7 } });
    expect(neighboursOf({ before: 7 }, [9, 8], false)).toEqual({ next: { after: 8 } });
    expect(neighboursOf({ after: 1 }, [], false)).toEqual({});
  });

  it('writes the Link header with per_page and the cursor, next before prev', () => {
    const url = 'https://api.example/repos/o/r/hooks/1/deliveries';
    expect(cursorLinkHeader(url, 2, {})).toBeUndefined();
    expect(cursorLinkHeader(url, 2, { next: { after: 6 }, prev: { before: 7 } })).toBe(
      `<${url}?per_page=2&cursor=${cursorOf({ after: 6 })}>; rel="next", ` +
        `<${url}?per_page=2&cursor=${cursorOf({ before: 7 })}>; rel="prev"`,
    );
  });
});
