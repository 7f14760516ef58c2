/**
 * The network guard's first half, alone so that code which only checks a URL (the webhooks API)
 * does not load the proxy and its tools: a host name is resolved once and every address of the
 * answer is checked with `isForbiddenAddress`. `network-guard.ts` dials only what this returned.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isForbiddenAddress } from '#domain/origin-url';
import { ForbiddenAddress, OriginFailed } from './origin.ts';

/** All addresses a host name resolves to (A and AAAA). */
export type Resolver = (host: string) => Promise<readonly string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

export const bareHost = (host: string): string => host.replace(/^\[|\]$/g, '');

/**
 * Resolves a host once and checks every address of the answer. A literal address is not resolved.
 * Throws `ForbiddenAddress` before any packet is sent to a forbidden address, `OriginFailed` when
 * the name does not resolve.
 */
export async function checkedAddresses(
  host: string,
  guard: { readonly allowedAddresses: readonly string[]; readonly resolve?: Resolver },
): Promise<readonly string[]> {
  const name = bareHost(host);
  let addresses: readonly string[];
  if (isIP(name) !== 0) addresses = [name];
  else {
    try {
      addresses = await (guard.resolve ?? systemResolver)(name);
    } catch {
      throw new OriginFailed(`The host ${name} could not be resolved`);
    }
  }
  if (addresses.length === 0) throw new OriginFailed(`The host ${name} could not be resolved`);
  const forbidden = addresses.find((address) => isForbiddenAddress(address, guard.allowedAddresses));
  if (forbidden !== undefined) throw new ForbiddenAddress(forbidden);
  return addresses;
}
