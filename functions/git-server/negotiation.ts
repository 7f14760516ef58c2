/**
 * An upload-pack request body (the client's wants and haves: the negotiation) read whole before
 * git starts, so that a client sending it slowly costs the task a socket and a buffer, not a git
 * process: git is started only once there is something for it to do. Bounded three ways:
 * - one body at most `maxBytes`, git's own bound on a buffered request (`http.maxRequestBuffer`,
 *   10 MiB: http-backend buffers an upload-pack request too, and refuses more);
 * - the bodies held at once at most `budgetBytes`, so that many connections cannot fill the
 *   task's memory (the git processes are bounded by `admission.ts`; these are not);
 * - each at most `timeoutMs` from its first byte on, well under an hour: the body deadline
 *   (`body-deadline.ts`) lets a body at its floor rate run on for hours.
 * A push (receive-pack) is streamed instead: its body is the pack, up to gigabytes.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from '#shared/errors';

export interface NegotiationLimits {
  readonly maxBytes: number;
  readonly budgetBytes: number;
  readonly timeoutMs: number;
}

export const NEGOTIATION_LIMITS: NegotiationLimits = Object.freeze({
  maxBytes: 10 * 1024 * 1024,
  budgetBytes: 128 * 1024 * 1024,
  timeoutMs: 60_000,
});

/** A body read whole, and its share of the budget, given back once. */
export interface Negotiation {
  readonly body: Buffer;
  readonly release: () => void;
}

export interface NegotiationReader {
  /**
   * Reads the request's body whole. Rejects with 413 over `maxBytes`, 503 when the budget is
   * spent, 408 after `timeoutMs`, or with the signal's reason when it aborts (the client has gone,
   * or the body deadline has answered). What it held is given back when it rejects.
   */
  read(request: IncomingMessage, signal: AbortSignal): Promise<Negotiation>;
}

export const tooLarge = (): HttpError => new HttpError(413, 'Payload Too Large');

export function negotiationReader(limits: NegotiationLimits, busy: () => HttpError): NegotiationReader {
  let held = 0;
  return {
    read(request, signal) {
      const announced = Number(request.headers['content-length'] ?? 0);
      if (announced > limits.maxBytes) return Promise.reject(tooLarge());
      const chunks: Buffer[] = [];
      let size = 0;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        held -= size;
      };
      return new Promise<Negotiation>((resolve, reject) => {
        const fail = (error: unknown) => {
          finish();
          release();
          // The rest is read and dropped: the answer goes out before the connection closes.
          request.resume();
          reject(error);
        };
        const onData = (chunk: Buffer) => {
          if (size + chunk.length > limits.maxBytes) return fail(tooLarge());
          if (held + chunk.length > limits.budgetBytes) return fail(busy());
          size += chunk.length;
          held += chunk.length;
          chunks.push(chunk);
        };
        const onEnd = () => {
          finish();
          resolve({ body: Buffer.concat(chunks, size), release });
        };
        const onAbort = () => fail(signal.reason);
        const onError = (error: Error) => fail(error);
        const timer = setTimeout(() => fail(new HttpError(408, 'Request Timeout')), limits.timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          request.off('data', onData);
          request.off('end', onEnd);
          request.off('error', onError);
          signal.removeEventListener('abort', onAbort);
        };
        if (signal.aborted) return fail(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        request.on('data', onData);
        request.on('end', onEnd);
        request.on('error', onError);
      });
    },
  };
}
