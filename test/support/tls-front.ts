import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A TLS front end for one made-up host name, reached as an HTTP proxy (`HTTPS_PROXY`). */
export interface TlsFront {
  /** The host name clients use, e.g. `ghe.test` (never resolved: the proxy is told it). */
  readonly hostname: string;
  /** `http://127.0.0.1:<port>`, for `HTTPS_PROXY`. */
  readonly proxyUrl: string;
  /** The self-signed certificate (PEM) clients must trust (`SSL_CERT_FILE`, `GIT_SSL_CAINFO`). */
  readonly certificateFile: string;
  /** Requests that reached the service: `METHOD path`, in order. */
  readonly requests: string[];
  stop(): Promise<void>;
}

/**
 * A self-signed certificate (no client trusts it unless told) for `name`, made with openssl in a
 * temporary directory: its key and certificate, and the certificate's file.
 */
export async function selfSignedCertificate(
  name: string,
  subjectAltName: string,
): Promise<{ key: Buffer; cert: Buffer; certificateFile: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tls-'));
  const keyFile = join(dir, 'key.pem');
  const certificateFile = join(dir, 'cert.pem');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certificateFile,
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
    '-addext',
    `subjectAltName=${subjectAltName}`,
  ]);
  return { key: await readFile(keyFile), cert: await readFile(certificateFile), certificateFile };
}

/**
 * What a deployment's TLS terminator (CloudFront) is to clients that insist on https, such as gh
 * for a GitHub Enterprise host: `https://<hostname>/…` forwarded to the local service at `target`.
 * Clients reach it as an HTTP proxy, by `CONNECT <hostname>:443`, so the made-up name needs no
 * DNS and no /etc/hosts entry and no port in the host name (gh refuses `host:port`). The
 * certificate is made here with openssl for this one name and lives in a temporary directory.
 * Any other CONNECT target is refused: the proxy reaches nothing but the service.
 */
export async function startTlsFront(target: string, hostname = 'ghe.test'): Promise<TlsFront> {
  const { key, cert, certificateFile } = await selfSignedCertificate(hostname, `DNS:${hostname}`);
  const upstream = new URL(target);
  const requests: string[] = [];
  const front = createHttpsServer({ key, cert }, (request, response) => {
    requests.push(`${request.method} ${request.url}`);
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, 'x-forwarded-proto': 'https' },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  const proxy = createHttpServer((_, response) => response.writeHead(405).end());
  const tunnels = new Set<Socket>();
  proxy.on('connect', (request, socket: Socket) => {
    if (request.url !== `${hostname}:443`) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    tunnels.add(socket);
    socket.on('close', () => tunnels.delete(socket));
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n', () => front.emit('connection', socket));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    hostname,
    proxyUrl: `http://127.0.0.1:${port}`,
    certificateFile,
    requests,
    stop: async () => {
      for (const socket of tunnels) socket.destroy();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
