/**
 * Structured JSON logs (one line per record, as CloudWatch Logs Insights reads them). Callers pass
 * explicit fields; request headers and bodies are never logged, so credentials cannot leak here.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';

const quiet = (): boolean => process.env.LOG_LEVEL === 'silent';

export function log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  if (quiet()) return;
  const line = JSON.stringify({ level, message, time: new Date().toISOString(), ...fields });
  if (level === 'error' || level === 'warn') console.error(line);
  else console.log(line);
}

/** An error that escaped a handler: a bug. Logged with its stack; never with the request. */
export function logUnhandled(route: string, requestId: string | undefined, error: unknown): void {
  log('error', 'unhandled error', {
    route,
    requestId,
    error:
      error instanceof Error
        ? { name: error.name, message: error.message, stack: error.stack }
        : String(error),
  });
}
