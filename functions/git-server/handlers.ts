/**
 * The Git front end's handlers, one per row of the route table it serves (`servedBy:
 * 'git-frontend'`, keyed by the row's `handler`): each is one service call, with bodies streamed.
 * A static table, so the bundle holds exactly these.
 */

import { type SmartHttpService, serveSmartHttp } from '#services/hosted-git';
import { lfsBatch, lfsDownload, lfsUpload } from '#services/lfs-api';
import { config } from '#shared/config';
import { HttpError } from '#shared/errors';
import { LFS_MEDIA_TYPE } from './replies.ts';
import type { GitReply, GitRequest } from './request.ts';

export type GitHandler = (request: GitRequest) => Promise<GitReply>;

/** One smart-HTTP route: `git http-backend`'s answer, streamed both ways. */
const smartHttp =
  (service: SmartHttpService): GitHandler =>
  async (request) =>
    serveSmartHttp(request.caller, request.params.owner ?? '', request.params.repo ?? '', {
      service,
      query: request.query,
      contentType: request.header('content-type'),
      contentEncoding: request.header('content-encoding'),
      gitProtocol: request.header('git-protocol'),
      body: request.body,
      contentLength: request.contentLength,
      signal: request.signal,
    });

/**
 * A small body read whole (a batch request is JSON): more than the service's `MAX_BODY_BYTES` is
 * 413, announced or not; what is over the limit is read and dropped, so the answer still arrives.
 */
async function smallBody(request: GitRequest): Promise<Buffer> {
  const limit = config().maxBodyBytes;
  const tooLarge = () => new HttpError(413, 'Payload Too Large');
  if ((request.contentLength ?? 0) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of request.body as AsyncIterable<Buffer>) {
    read += chunk.length;
    if (read <= limit) chunks.push(chunk);
  }
  if (read > limit) throw tooLarge();
  return Buffer.concat(chunks);
}

/** The handlers that start a git process: the ones `admission.ts` bounds. */
export const STARTS_GIT: ReadonlySet<string> = new Set([
  'git/info-refs',
  'git/upload-pack',
  'git/receive-pack',
]);

export const GIT_HANDLERS: Readonly<Record<string, GitHandler>> = {
  'git/info-refs': smartHttp('/info/refs'),
  'git/upload-pack': smartHttp('/git-upload-pack'),
  'git/receive-pack': smartHttp('/git-receive-pack'),
  /** The Git LFS batch API (basic transfer). */
  'git/lfs-batch': async (request) => {
    const body = await smallBody(request);
    const reply = await lfsBatch(
      request.caller,
      request.params.owner ?? '',
      request.params.repo ?? '',
      body,
      request.urls.auth,
    );
    return { status: 200, headers: { 'Content-Type': LFS_MEDIA_TYPE }, body: JSON.stringify(reply) };
  },
  /** An LFS object's bytes (the local store's href). */
  'git/lfs-download': async (request) => {
    const object = await lfsDownload(
      request.caller,
      request.params.owner ?? '',
      request.params.repo ?? '',
      request.params.oid ?? '',
    );
    return {
      status: 200,
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(object.size) },
      body: object.stream,
    };
  },
  /** Stores a verified LFS object (the local store's href). */
  'git/lfs-upload': async (request) => {
    await lfsUpload(
      request.caller,
      request.params.owner ?? '',
      request.params.repo ?? '',
      request.params.oid ?? '',
      request.body,
      request.query.size,
    );
    return { status: 200 };
  },
};
