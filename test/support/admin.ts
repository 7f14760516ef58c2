import { type BinResult, runBin } from './bin.ts';

export interface AdminResult extends BinResult {
  readonly json: unknown;
}

/** Runs the real admin CLI (`bin/admin.ts`) as a separate process against a stack's endpoints file. */
export async function admin(
  endpointsFile: string,
  ...rest: Array<string | { env: Record<string, string> }>
): Promise<AdminResult> {
  const extraEnv = rest.find((item) => typeof item !== 'string')?.env ?? {};
  const args = rest.filter((item): item is string => typeof item === 'string');
  const result = await runBin('admin.ts', args, { LOCAL_ENDPOINTS_FILE: endpointsFile, ...extraEnv });
  return { ...result, json: result.code === 0 ? JSON.parse(result.stdout) : undefined };
}
