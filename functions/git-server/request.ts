import type { Readable } from 'node:stream';
import type { Caller } from '#services/authenticate';
import type { Route } from '#shared/routes';
import type { PublicUrls } from '#shared/urls';

/** What a Git front-end handler gets: checked credentials, and the request body still unread. */
export interface GitRequest {
  readonly route: Route;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly caller: Caller;
  readonly urls: PublicUrls;
  /** A request header, case-insensitively. */
  header(name: string): string | undefined;
  /** The body as it arrives: handlers stream it on, or read it whole only when it is small. */
  readonly body: Readable;
  /** `Content-Length`, absent for a chunked body. */
  readonly contentLength: number | undefined;
  /** Aborted when the client has gone: whatever the handler started should stop. */
  readonly signal: AbortSignal;
}

/** What a handler answers: a body that is a stream goes out as it is read. */
export interface GitReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Buffer | string | Readable;
}
