/**
 * A deadline on a request body that keeps arriving too slowly, as Apache's `mod_reqtimeout` sets
 * one (`body=20,MinRate=500`): the body has `timeoutSeconds` to start, and each `minBytesPerSecond`
 * bytes that arrive add a second. A client trickling a byte every few seconds, holding a git process
 * all the while, is cut off after about `timeoutSeconds`; a push at any usable speed never is.
 *
 * The credit a body builds up is not a licence to stop: a body from which nothing at all arrives
 * for `timeoutSeconds` is late too, however much came before. A push of 30 MB earns 60,000 s of
 * credit; without this, one whose client has gone while the connection is held open (CloudFront
 * keeps its origin connection until its own timeout) would hold git, and the quarantine it fills,
 * until the socket's idle timeout. Git writes a pack without pauses once it sends one.
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
  let stalledSince = Date.now();
  const timer = setInterval(() => {
    if (request.complete || socket.destroyed) return stop();
    const now = Date.now();
    // Waiting on the server, not the client.
    const serverBusy = request.readableLength > 0 || request.isPaused();
    if (serverBusy) deadline += TICK_MS;
    const received = socket.bytesRead - startBytes;
    if (serverBusy || received > credited) stalledSince = now;
    deadline += ((received - credited) / limits.minBytesPerSecond) * 1000;
    credited = received;
    if (now > deadline || now - stalledSince > limits.timeoutSeconds * 1000) {
      stop();
      late();
    }
  }, TICK_MS);
  timer.unref();
  const stop = () => clearInterval(timer);
  return stop;
}
