/** Small statistics helpers for the benchmark scripts. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export const median = (samples: readonly number[]): number => percentile(samples, 50);

export const ms = (value: number): string => `${value.toFixed(value < 10 ? 1 : 0)} ms`;

export const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;
