/**
 * A deadline on a request body that keeps arriving too slowly, as Apache's `mod_reqtimeout` sets
 * one (`body=20,MinRate=500`): the body has `timeoutSeconds` to start, and each `minBytesPerSecond`
 * bytes that arrive add a second. A client trickling a byte every few seconds, holding a git process
 * all the while, is cut off after about `timeoutSeconds`; a push at any usable speed never is.
 *
 * Counted at the socket (`bytesRead`), so reading the body stays the handler's alone. Time in which
 * the server itself does not read (the body waits in Node's buffer because git is busy) counts as
 * progress: only the client's slowness is held against it.
 */
import type { IncomingMessage } from 'node:http';

export interface BodyDeadlineLimits {
  readonly timeoutSeconds: number;
  readonly minBytesPerSecond: number;
}

const TICK_MS = 1000;

/** Calls `late` once if the body falls behind; the returned function stops watching. */
export function watchBody(
  request: IncomingMessage,
  limits: BodyDeadlineLimits,
  late: () => void,
): () => void {
  const socket = request.socket;
  const startBytes = socket.bytesRead;
  let deadline = Date.now() + limits.timeoutSeconds * 1000;
  let credited = 0;
  const timer = setInterval(() => {
    if (request.complete || socket.destroyed) return stop();
    // Waiting on the server, not the client.
    if (request.readableLength > 0 || request.isPaused()) deadline += TICK_MS;
    const received = socket.bytesRead - startBytes;
    deadline += ((received - credited) / limits.minBytesPerSecond) * 1000;
    credited = received;
    if (Date.now() > deadline) {
      stop();
      late();
    }
  }, TICK_MS);
  timer.unref();
  const stop = () => clearInterval(timer);
  return stop;
}
