/**
 * How many git processes a front-end task runs at once: at most `total` requests that start one,
 * and at most `perClient` of them for one client (a user, an app, or an anonymous network), so
 * that one client cannot take the task's memory or its every slot; and anonymous clients together
 * at most `total - reservedForSignedIn`, so that however many addresses anonymous traffic comes
 * from, signed-in users (the owners of what is served) still find slots. A request over a bound is
 * refused at once rather than queued: a queued request would still hold a connection, and git
 * itself retries nothing.
 */

export interface AdmissionLimits {
  readonly total: number;
  readonly perClient: number;
  /** Slots only signed-in clients (users, apps) may take. */
  readonly reservedForSignedIn: number;
}

/** Of the task's slots, the share anonymous clients can never fill. */
export const signedInReserve = (total: number): number => Math.floor(total / 4);

/** A slot, given back once (later calls do nothing). */
export type Release = () => void;

/** A slot, or which bound is full. */
export type Admitted =
  | { readonly admitted: true; readonly release: Release }
  | { readonly admitted: false; readonly full: 'task' | 'client' };

export interface Admission {
  admit(client: string, signedIn: boolean): Admitted;
}

export function admission(limits: AdmissionLimits): Admission {
  let total = 0;
  let anonymous = 0;
  const byClient = new Map<string, number>();
  return {
    admit(client, signedIn) {
      const held = byClient.get(client) ?? 0;
      if (held >= limits.perClient) return { admitted: false, full: 'client' };
      if (total >= limits.total) return { admitted: false, full: 'task' };
      if (!signedIn && anonymous >= limits.total - limits.reservedForSignedIn)
        return { admitted: false, full: 'task' };
      total++;
      if (!signedIn) anonymous++;
      byClient.set(client, held + 1);
      let released = false;
      return {
        admitted: true,
        release: () => {
          if (released) return;
          released = true;
          total--;
          if (!signedIn) anonymous--;
          const left = (byClient.get(client) ?? 1) - 1;
          if (left > 0) byClient.set(client, left);
          else byClient.delete(client);
        },
      };
    },
  };
}
