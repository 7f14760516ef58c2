import { type BinResult, runBin } from './bin.ts';

export interface SmokeRun extends BinResult {
  /** Each printed check line by check name: `{ outcome: 'FAIL', message: '…' }`. */
  readonly checks: Record<string, { readonly outcome: string; readonly message: string }>;
}

/** Runs the real smoke check (`bin/smoke.ts`, what `npm run smoke` runs) as a separate process. */
export async function smoke(args: readonly string[], env: Record<string, string> = {}): Promise<SmokeRun> {
  const result = await runBin('smoke.ts', args, { SMOKE_TOKEN: '', ...env });
  const checks = Object.fromEntries(
    result.stdout
      .trim()
      .split('\n')
      .flatMap((line) => {
        const match = /^(PASS|FAIL|SKIP) +(\S+) +(.*)$/.exec(line);
        return match ? [[match[2], { outcome: match[1], message: match[3] }]] : [];
      }),
  );
  return { ...result, checks };
}
