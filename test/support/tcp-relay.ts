import { connect, createServer } from 'node:net';

export interface TcpRelay {
  /** The port on 127.0.0.1 the relay listens on. */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A TCP relay on 127.0.0.1 in front of a local origin on `targetPort`: each client is connected to
 * the origin after `delayMs()` at that moment (an origin that answers late), and every chunk the origin sends is
 * reported to `onOriginData` (what an importer fetched).
 */
export async function tcpRelay(
  targetPort: number,
  options: { readonly delayMs?: () => number; readonly onOriginData?: (bytes: number) => void } = {},
): Promise<TcpRelay> {
  const server = createServer((client) => {
    client.pause();
    setTimeout(() => {
      const upstream = connect(targetPort, '127.0.0.1');
      if (options.onOriginData) upstream.on('data', (chunk: Buffer) => options.onOriginData?.(chunk.length));
      client.pipe(upstream).pipe(client);
      client.resume();
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end);
      upstream.on('error', end);
    }, options.delayMs?.() ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
