import { type Dialer, type DialTarget, type Resolver, tcpDialer } from '#vcs/network-guard';

/**
 * A stub resolver over a fixed zone (names only it knows) and a dialer that records every dial and
 * refuses any address but 127.0.0.1 before a packet is sent: with them an adapter test proves both
 * that a name reaches the origin only through the guard and that a forbidden address is never
 * dialled (`dialled` stays free of it).
 */
export function stubNetwork(zone: Readonly<Record<string, readonly string[]>>): {
  readonly resolve: Resolver;
  readonly dial: Dialer;
  readonly dialled: DialTarget[];
} {
  const dialled: DialTarget[] = [];
  return {
    dialled,
    resolve: async (host) => {
      const answer = zone[host];
      if (!answer) throw new Error(`NXDOMAIN ${host}`);
      return answer;
    },
    dial: (target, timeoutMs) => {
      dialled.push(target);
      if (target.address !== '127.0.0.1') throw new Error(`dialer called for ${target.address}`);
      return tcpDialer(target, timeoutMs);
    },
  };
}
