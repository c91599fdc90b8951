// What a run costs, from the app's [hardware] and a per-second price table. Money leaves here as
// integer micro-cents (1 USD = 100 cents = 100,000,000 micro-cents) so stored sums are exact.

export interface Hardware {
  cpu: number;
  memoryGb: number;
  /** "CPU" or a GPU type such as "AMPERE_A10". */
  compute: string;
  gpuCount: number;
}

export interface PriceTable {
  /** USD per CPU core per second. */
  cpuCoreSecondUsd: number;
  /** USD per GB of memory per second. */
  memoryGbSecondUsd: number;
  /** USD per GPU per second, by GPU type. */
  gpuSecondUsd: Readonly<Record<string, number>>;
}

export interface RunCost {
  gpuUcents: bigint;
  cpuUcents: bigint;
  memoryUcents: bigint;
  /** Set when the app's GPU type has no price: its GPU cost is recorded as 0. */
  unpricedGpu?: string;
}

/**
 * Defaults: public serverless per-second list prices of this market at the time of writing
 * (rounded; hourly equivalents in parentheses). Operators override them with PRICE_* settings.
 */
export const DEFAULT_CPU_CORE_SECOND_USD = 0.00000655; // ($0.0236 per core-hour)
export const DEFAULT_MEMORY_GB_SECOND_USD = 0.00000222; // ($0.0080 per GB-hour)
export const DEFAULT_GPU_SECOND_USD: Readonly<Record<string, number>> = {
  TURING_T4: 0.000164, // ($0.59/h)
  ADA_L4: 0.000222, // ($0.80/h)
  AMPERE_A10: 0.000306, // ($1.10/h)
  ADA_L40: 0.000542, // ($1.95/h)
  AMPERE_A100_40GB: 0.000583, // ($2.10/h)
  AMPERE_A100_80GB: 0.000694, // ($2.50/h)
  HOPPER_H100: 0.001097, // ($3.95/h)
};

export const DEFAULT_PRICES: PriceTable = {
  cpuCoreSecondUsd: DEFAULT_CPU_CORE_SECOND_USD,
  memoryGbSecondUsd: DEFAULT_MEMORY_GB_SECOND_USD,
  gpuSecondUsd: DEFAULT_GPU_SECOND_USD,
};

/** The default of PRICE_GPU_SECOND_USD, in its `TYPE=usd,TYPE=usd` form. */
export const DEFAULT_GPU_PRICE_LIST = Object.entries(DEFAULT_GPU_SECOND_USD).map(([k, v]) => `${k}=${v}`).join(',');

export class PriceListError extends Error {}

/** Parses `AMPERE_A10=0.000306,TURING_T4=0.000164`; every entry must be a GPU type and a non-negative rate. */
export function parseGpuPriceList(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Z0-9_]{1,64})=([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)$/.exec(part);
    if (!m) throw new PriceListError(`PRICE_GPU_SECOND_USD: entry ${JSON.stringify(part)} is not TYPE=usd_per_second`);
    const rate = Number(m[2]);
    if (!Number.isFinite(rate) || rate > 1) throw new PriceListError(`PRICE_GPU_SECOND_USD: rate of ${m[1]} must be between 0 and 1 USD per second`);
    out[m[1]] = rate;
  }
  return out;
}

/** The price table from configuration values (see config/config.ts PRICE_*). */
export function priceTable(c: { priceCpuCoreSecondUsd: number; priceMemoryGbSecondUsd: number; priceGpuSecondUsd: string }): PriceTable {
  return { cpuCoreSecondUsd: c.priceCpuCoreSecondUsd, memoryGbSecondUsd: c.priceMemoryGbSecondUsd, gpuSecondUsd: parseGpuPriceList(c.priceGpuSecondUsd) };
}

const UCENTS_PER_USD = 100_000_000;

// Rounded to the nearest micro-cent per resource and run; a micro-cent is 1e-8 USD, far below any
// rate times a millisecond that matters, and rounding each stored value keeps every sum exact.
function ucents(usdPerUnitSecond: number, units: number, runningTimeMs: number): bigint {
  const v = Math.round((usdPerUnitSecond * UCENTS_PER_USD * units * runningTimeMs) / 1000);
  return BigInt(Number.isFinite(v) && v > 0 ? v : 0);
}

/** Cost of one run of `runningTimeMs` on `hardware`, per resource, in integer micro-cents. */
export function costOf(hardware: Hardware, runningTimeMs: number, prices: PriceTable = DEFAULT_PRICES): RunCost {
  const ms = Math.max(0, runningTimeMs);
  const cost: RunCost = {
    cpuUcents: ucents(prices.cpuCoreSecondUsd, hardware.cpu, ms),
    memoryUcents: ucents(prices.memoryGbSecondUsd, hardware.memoryGb, ms),
    gpuUcents: 0n,
  };
  if (hardware.compute !== 'CPU' && hardware.gpuCount > 0) {
    const rate = prices.gpuSecondUsd[hardware.compute];
    if (rate === undefined) cost.unpricedGpu = hardware.compute;
    else cost.gpuUcents = ucents(rate, hardware.gpuCount, ms);
  }
  return cost;
}
