import { describe, expect, it } from 'vitest';
import { MAX_AUTHORS_FILE_BYTES } from '#domain/authors-file';
import { MULTIPART_LIMITS, type MultipartLimits, parseMultipart } from '#http/middleware/multipart-form';
import { isBinaryMediaType } from '#shared/binary-media';
import { HttpError } from '#shared/errors';

const BOUNDARY = '----form-boundary-7MA4YWxkTrZu0gW';
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

type Part = { name: string; value: string | Buffer; filename?: string };

/** A body as a browser sends it: CRLF line ends, one header block per part. */
function body(parts: readonly Part[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition =
      part.filename === undefined
        ? `form-data; name="${part.name}"`
        : `form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: text/plain`;
    chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n`));
    chunks.push(Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

async function refusal(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
}

const small: MultipartLimits = { parts: 4, files: 1, fieldBytes: 10, fileBytes: 16 };

describe('parseMultipart', () => {
  it('gives the fields and the file byte for byte: CRLF and bytes that are not UTF-8 kept', async () => {
    const file = Buffer.concat([
      Buffer.from('a = A <a@x.org>\r\n'),
      Buffer.from([0xe9, 0x00, 0xff]),
      Buffer.from('\r\n'),
    ]);
    const form = await parseMultipart(
      TYPE,
      body([
        { name: '_csrf', value: 'token' },
        { name: 'format', value: '' },
        { name: 'file', value: file, filename: 'authors é.txt' },
        { name: 'content', value: 'pasted\r\nlines' },
      ]),
    );
    expect(form.fields.get('_csrf')).toBe('token');
    expect(form.fields.get('content')).toBe('pasted\r\nlines');
    expect(form.files.get('file')).toEqual({
      filename: 'authors é.txt',
      contentType: 'text/plain',
      bytes: file,
    });
  });

  it('leaves out an empty file input (no name, no bytes), as Chromium sends it', async () => {
    const empty = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--${BOUNDARY}--\r\n`,
    );
    for (const sent of [empty, body([{ name: 'file', value: '', filename: '' }])])
      expect((await parseMultipart(TYPE, sent)).files.size).toBe(0);
  });

  it('takes a file and a field of exactly the bound, and refuses one byte more with 413', async () => {
    const whole = await parseMultipart(
      TYPE,
      body([
        { name: 'content', value: 'x'.repeat(10) },
        { name: 'file', value: 'y'.repeat(16), filename: 'f.txt' },
      ]),
      small,
    );
    expect(whole.files.get('file')?.bytes.length).toBe(16);
    expect(whole.fields.get('content')).toHaveLength(10);
    const file = await refusal(
      parseMultipart(TYPE, body([{ name: 'file', value: 'y'.repeat(17), filename: 'f.txt' }]), small),
    );
    expect(file.status).toBe(413);
    expect(file.message).toContain('over 16 bytes');
    expect(
      (await refusal(parseMultipart(TYPE, body([{ name: 'content', value: 'x'.repeat(11) }]), small))).status,
    ).toBe(413);
  });

  it('refuses too many parts, or a second file, with 400', async () => {
    const many = Array.from({ length: 5 }, (_, n) => ({ name: `f${n}`, value: 'v' }));
    expect((await refusal(parseMultipart(TYPE, body(many), small))).status).toBe(400);
    const twoFiles = body([
      { name: 'file', value: 'a', filename: 'a.txt' },
      { name: 'other', value: 'b', filename: 'b.txt' },
    ]);
    expect((await refusal(parseMultipart(TYPE, twoFiles, small))).status).toBe(400);
  });

  it('refuses a malformed body with 400: no boundary, a cut body, a part without headers', async () => {
    const cut = body([{ name: 'file', value: 'abc', filename: 'a.txt' }]).subarray(0, 60);
    for (const [type, sent] of [
      ['multipart/form-data', body([{ name: 'a', value: 'b' }])],
      [TYPE, cut],
      [TYPE, Buffer.from(`--${BOUNDARY}\r\ngarbage without a blank line`)],
    ] as const) {
      const error = await refusal(parseMultipart(type, sent));
      expect(error.status, sent.toString()).toBe(400);
      expect(error.message).toContain('malformed');
    }
  });
});

describe('parseMultipart on arbitrary bytes', () => {
  it('gives a form or an HttpError (a page, never a 500) for 500 seeded jumbles of multipart pieces', async () => {
    const pieces = [
      `--${BOUNDARY}`,
      '\r\n',
      '\r\n\r\n',
      'Content-Disposition: form-data; name="a"',
      'Content-Disposition: form-data; name="f"; filename="x"',
      "Content-Disposition: form-data; name*=UTF-8''%E9",
      'Content-Type: text/plain; charset=latin1',
      `--${BOUNDARY}--`,
      '\u00e9\u0000\uffff',
      'x'.repeat(40),
    ];
    let seed = 37;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    for (let n = 0; n < 500; n++) {
      const sent = Buffer.from(
        Array.from({ length: 1 + (next() % 12) }, () => pieces[next() % pieces.length]).join(''),
      );
      const outcome = await parseMultipart(TYPE, sent, small).then(
        () => 'form',
        (error: unknown) => error,
      );
      if (outcome !== 'form') expect(outcome, sent.toString()).toBeInstanceOf(HttpError);
    }
  });
});

describe('the bounds', () => {
  it('are the authors file’s (what the API’s content takes), and multipart bodies reach functions as base64', () => {
    expect(MULTIPART_LIMITS.fileBytes).toBe(MAX_AUTHORS_FILE_BYTES);
    expect(MULTIPART_LIMITS.fieldBytes).toBe(MAX_AUTHORS_FILE_BYTES);
    expect(isBinaryMediaType(TYPE)).toBe(true);
  });
});
