import { createHash } from 'node:crypto';
import { base62 } from './base62.ts';

/** Characters of an application's tag: 62^6 ≈ 5.7 × 10^10 tags. */
export const APP_TAG_LENGTH = 6;

/**
 * An application's tag: 6 base62 digits of the SHA-256 of its client id. Its tokens carry it (see
 * `tokens.ts`), and its suspension state is stored under it (`keys.ts` `appStateKey`), so that a
 * token names the item that says whether its application is suspended. Different applications
 * may share a tag; the state item lists client ids, so sharing one is harmless. A plain hash, not
 * a keyed one: client ids are public, and all a tag tells someone holding the token is which
 * application it belongs to (see docs/decisions.md, "One round trip for an OAuth app token").
 */
export const appTag = (clientId: string): string =>
  base62(createHash('sha256').update(clientId).digest().readUIntBE(0, 6), APP_TAG_LENGTH);
