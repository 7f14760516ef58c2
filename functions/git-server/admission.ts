/**
 * How many git processes a front-end task runs at once: at most `total` requests that start one,
 * and at most `perClient` of them for one client (a user, an app, or an anonymous address), so
 * that one client cannot take the task's memory or its every slot. A request over either bound is
 * refused at once rather than queued: a queued request would still hold a connection, and git
 * itself retries nothing.
 */

export interface AdmissionLimits {
  readonly total: number;
  readonly perClient: number;
}

/** A slot, given back once (later calls do nothing). */
export type Release = () => void;

/** A slot, or which bound is full. */
export type Admitted =
  | { readonly admitted: true; readonly release: Release }
  | { readonly admitted: false; readonly full: 'task' | 'client' };

export interface Admission {
  admit(client: string): Admitted;
}

export function admission(limits: AdmissionLimits): Admission {
  let total = 0;
  const byClient = new Map<string, number>();
  return {
    admit(client) {
      const held = byClient.get(client) ?? 0;
      if (held >= limits.perClient) return { admitted: false, full: 'client' };
      if (total >= limits.total) return { admitted: false, full: 'task' };
      total++;
      byClient.set(client, held + 1);
      let released = false;
      return {
        admitted: true,
        release: () => {
          if (released) return;
          released = true;
          total--;
          const left = (byClient.get(client) ?? 1) - 1;
          if (left > 0) byClient.set(client, left);
          else byClient.delete(client);
        },
      };
    },
  };
}
