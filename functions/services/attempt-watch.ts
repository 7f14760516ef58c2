/**
 * A running import step watches its own import. The API that cancels or restarts an import runs in
 * another function (in AWS another Lambda; StopExecution does not stop a running invocation), so
 * the only signal both see is the import item: the step reads it (one strongly consistent GetItem)
 * every `WATCH_INTERVAL_MS`, and once it is gone or on another attempt, every child process the
 * step started is killed, process group and all (`runCancellable` → `runBounded`). The step then
 * ends with `AttemptSuperseded`, and after a cancel whatever it wrote on disk since is removed.
 */
import { getImport } from '#data/imports/items';
import type { Import } from '#domain/imports';
import { log } from '#shared/log';
import { runCancellable } from '#vcs/cancellation';

/** How often a running step reads its import: a cancel kills its processes within this plus one read. */
export const WATCH_INTERVAL_MS = 1000;

/** How long a killed step may take to unwind (its adapter's own clean-up) before the watch gives up on it. */
const UNWIND_MS = 5000;

export interface AttemptKey {
  readonly owner: string;
  readonly repo: string;
  readonly attempt: number;
}

/** The attempt was restarted or the import cancelled while this step ran. */
export class AttemptSuperseded extends Error {
  override readonly name = 'AttemptSuperseded';
}

export const superseded = (key: AttemptKey): AttemptSuperseded =>
  new AttemptSuperseded(`${key.owner}/${key.repo} attempt ${key.attempt} is no longer current`);

/** The import as the attempt last saw it, and what is there now (undefined: cancelled). */
export type AfterCancel = (seen: Import, now: Import | undefined) => Promise<void>;

type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/**
 * Runs one step of the attempt `key` (given the import as read when it starts), watching the
 * import meanwhile and once more when the step ends. When the import was cancelled (gone, or
 * replaced by a new import) `afterCancel` removes what the step may have written since the cancel
 * removed the import's files; either way the step ends with `AttemptSuperseded`.
 */
export async function runWatched<T>(
  key: AttemptKey,
  step: (record: Import) => Promise<T>,
  afterCancel: AfterCancel,
): Promise<T> {
  const record = await getImport(key.owner, key.repo);
  if (record?.attempt !== key.attempt) throw superseded(key);
  const stop = new AbortController();
  let gone: { now: Import | undefined } | undefined;
  const look = async () => {
    try {
      const now = await getImport(key.owner, key.repo);
      if (now?.attempt === key.attempt || gone) return;
      gone = { now };
      stop.abort();
    } catch (error) {
      // A failed read decides nothing: the next one will (the step's own writes stay conditional).
      log('warn', 'import watch read failed', { error: (error as Error).name });
    }
  };

  let watching = true;
  let reading: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    timer = setTimeout(() => {
      reading = look().then(() => {
        if (watching && !gone) next();
      });
    }, WATCH_INTERVAL_MS);
  };
  next();
  const outcome = await unwound(
    runCancellable(stop.signal, () => step(record)),
    stop.signal,
  );
  watching = false;
  clearTimeout(timer);
  await reading;
  // A cancel in the step's last moments (after its last conditional write) is seen here.
  if (!gone) await look();
  if (!gone) {
    if (outcome.ok) return outcome.value;
    throw outcome.error;
  }
  const { now } = gone;
  if (!now || now.importId !== record.importId) {
    await afterCancel(record, now).catch((error: unknown) =>
      log('warn', 'removing a cancelled step’s files failed', { error: (error as Error).name }),
    );
  }
  throw superseded(key);
}

/** The step's outcome; once `signal` aborts, at most `UNWIND_MS` later (a step stuck elsewhere is left behind). */
function unwound<T>(work: Promise<T>, signal: AbortSignal): Promise<Outcome<T>> {
  const settled = work.then(
    (value): Outcome<T> => ({ ok: true, value }),
    (error: unknown): Outcome<T> => ({ ok: false, error }),
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Outcome<T>>((resolve) => {
    signal.addEventListener(
      'abort',
      () => {
        timer = setTimeout(() => {
          log('warn', 'a cancelled import step did not unwind in time');
          resolve({ ok: false, error: new Error('step still unwinding') });
        }, UNWIND_MS);
      },
      { once: true },
    );
  });
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}
