export interface LoadCell {
  /** Completed operations per second over the whole phase. */
  rps: number;
  p50ms: number;
  p99ms: number;
  maxMs: number;
  ok: number;
  errors: number;
  /** The first error seen, if any, to tell a broken setup from a slow one. */
  firstError?: string;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summarize(latencies: number[], errors: number, firstError: string | undefined, elapsedMs: number): LoadCell {
  latencies.sort((a, b) => a - b);
  const r = (n: number) => Math.round(n * 100) / 100;
  return {
    rps: r(latencies.length / (elapsedMs / 1000)),
    p50ms: r(percentile(latencies, 50)),
    p99ms: r(percentile(latencies, 99)),
    maxMs: r(latencies[latencies.length - 1] ?? NaN),
    ok: latencies.length,
    errors,
    ...(firstError ? { firstError } : {}),
  };
}

/**
 * Open loop: starts `fn` at a fixed rate for `seconds`, whatever the answers do. Latency counts
 * from the scheduled start, so a stalled scheduler or server shows up instead of hiding
 * (no coordinated omission). Every call is bounded by `timeoutMs`.
 */
export async function atFixedRate(rate: number, seconds: number, fn: (signal: AbortSignal) => Promise<void>, timeoutMs = 10_000): Promise<LoadCell> {
  const latencies: number[] = [];
  const inFlight: Promise<void>[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const total = Math.round(rate * seconds);
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      fn(AbortSignal.timeout(timeoutMs)).then(
        () => void latencies.push(performance.now() - due),
        (err: Error) => {
          errors++;
          firstError ??= err.message;
        },
      ),
    );
  }
  await Promise.all(inFlight);
  return summarize(latencies, errors, firstError, performance.now() - t0);
}

/** Closed loop: `concurrency` callers, each calling `fn` again as soon as it returns, for `seconds`. */
export async function atMaxRate(concurrency: number, seconds: number, fn: (signal: AbortSignal) => Promise<void>, timeoutMs = 10_000): Promise<LoadCell> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        try {
          await fn(AbortSignal.timeout(timeoutMs));
          latencies.push(performance.now() - s);
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
        }
      }
    }),
  );
  return summarize(latencies, errors, firstError, performance.now() - t0);
}
