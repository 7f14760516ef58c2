/** Loopback ports for the local origin servers (git daemon, hg serve) the stand-ins start. */
import { connect, createServer } from 'node:net';

/** Whether something accepts connections on 127.0.0.1:`port` (a server that has started). */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A port of 127.0.0.1 that was free a moment ago (for servers that must be told their port). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}
