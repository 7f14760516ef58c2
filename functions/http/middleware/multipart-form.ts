import busboy from 'busboy';
import { MAX_AUTHORS_FILE_BYTES } from '#domain/authors-file';
import { HttpError } from '#shared/errors';

/*
 * `multipart/form-data` for the pages (a form with `<input type=file>`): the fields as the
 * url-encoded forms give them, and the files as bytes. The body arrives base64-encoded, byte for
 * byte, because the media type is in the API's binaryMediaTypes (`#shared/binary-media`), behind
 * API Gateway and locally alike.
 */

/** A file a form posted: its bytes as sent, never decoded here. */
export interface UploadedFile {
  /** The name the browser gave (its base name only); may be empty. */
  readonly filename: string;
  readonly contentType: string;
  readonly bytes: Buffer;
}

export interface MultipartForm {
  readonly fields: URLSearchParams;
  /** The first file of each field name; a file input left empty sends none. */
  readonly files: ReadonlyMap<string, UploadedFile>;
}

export interface MultipartLimits {
  /** Parts of every kind (fields and files). */
  readonly parts: number;
  readonly files: number;
  /** Bytes of one field's value, and of one file. */
  readonly fieldBytes: number;
  readonly fileBytes: number;
}

/**
 * A page form has a few fields and at most one file. The authors file is the only file a page takes
 * and the largest value a page field carries (pasted instead), so both sizes are its bound, which
 * is also what the API's `PUT …/import/authors` takes in `content`.
 */
export const MULTIPART_LIMITS: MultipartLimits = {
  parts: 20,
  files: 1,
  fieldBytes: MAX_AUTHORS_FILE_BYTES,
  fileBytes: MAX_AUTHORS_FILE_BYTES,
};

const MALFORMED =
  'The form could not be read: its multipart/form-data body is malformed. Go back, reload the page and send it again.';

const tooLarge = (bytes: number) =>
  new HttpError(
    413,
    `A file or field of this form is over ${bytes.toLocaleString('en-US')} bytes, the most it may carry. Go back and send a smaller one.`,
  );

const tooManyParts = () =>
  new HttpError(
    400,
    'The form has more fields or files than this page takes. Go back, reload the page and send it again.',
  );

/**
 * The fields and files of a multipart body, or an `HttpError`: 400 for a body that is malformed or
 * has too many parts, 413 for a field or file over its bound. Never a partial form.
 */
export function parseMultipart(
  contentType: string,
  body: Buffer,
  limits: MultipartLimits = MULTIPART_LIMITS,
): Promise<MultipartForm> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      defParamCharset: 'utf8',
      // One byte more than allowed: busboy truncates at its limit, so a value of exactly the bound
      // is whole and one over is seen as over.
      limits: {
        parts: limits.parts,
        fields: limits.parts,
        files: limits.files,
        fieldSize: limits.fieldBytes + 1,
        fileSize: limits.fileBytes + 1,
      },
    });
  } catch {
    // No boundary, or not multipart at all.
    return Promise.reject(new HttpError(400, MALFORMED));
  }
  return new Promise((resolve, reject) => {
    const fields = new URLSearchParams();
    const files = new Map<string, UploadedFile>();
    let refusal: HttpError | undefined;
    const refuse = (error: HttpError) => {
      refusal ??= error;
    };
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated || Buffer.byteLength(value) > limits.fieldBytes)
        refuse(tooLarge(limits.fieldBytes));
      else fields.append(name, value);
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= limits.fileBytes) chunks.push(chunk);
      });
      stream.on('limit', () => refuse(tooLarge(limits.fileBytes)));
      stream.on('end', () => {
        if (size > limits.fileBytes) return refuse(tooLarge(limits.fileBytes));
        // An empty file input: the browser sends a part with no name and no bytes.
        if (!info.filename && size === 0) return;
        if (!files.has(name))
          files.set(name, {
            filename: info.filename ?? '',
            contentType: info.mimeType,
            bytes: Buffer.concat(chunks),
          });
      });
    });
    parser.on('partsLimit', () => refuse(tooManyParts()));
    parser.on('filesLimit', () => refuse(tooManyParts()));
    parser.on('fieldsLimit', () => refuse(tooManyParts()));
    parser.on('error', () => reject(refusal ?? new HttpError(400, MALFORMED)));
    parser.on('close', () => (refusal ? reject(refusal) : resolve({ fields, files })));
    try {
      parser.end(body);
    } catch {
      reject(refusal ?? new HttpError(400, MALFORMED));
    }
  });
}
