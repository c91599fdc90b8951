import { describe, expect, it } from 'vitest';
import { costOf, DEFAULT_GPU_PRICE_LIST, DEFAULT_PRICES, parseGpuPriceList, priceTable } from '../../db/metrics/cost.js';
import { loadConfig } from '../../config/config.js';

describe('costOf', () => {
  it('prices CPU, memory and GPU per second in integer micro-cents', () => {
    // 2 cores, 4 GB, one A10 for 1.5 s: 655*2*1.5 = 1965, 222*4*1.5 = 1332, 30600*1.5 = 45900 micro-cents.
    expect(costOf({ cpu: 2, memoryGb: 4, compute: 'AMPERE_A10', gpuCount: 1 }, 1500)).toEqual({ cpuUcents: 1965n, memoryUcents: 1332n, gpuUcents: 45900n });
    expect(costOf({ cpu: 0.5, memoryGb: 0.25, compute: 'CPU', gpuCount: 0 }, 1)).toEqual({ cpuUcents: 0n, memoryUcents: 0n, gpuUcents: 0n });
    expect(costOf({ cpu: 1, memoryGb: 1, compute: 'HOPPER_H100', gpuCount: 2 }, 3_600_000).gpuUcents).toBe(BigInt(Math.round(0.001097 * 1e8 * 2 * 3600)));
    expect(costOf({ cpu: 1, memoryGb: 1, compute: 'QUANTUM_Q1', gpuCount: 1 }, 1000)).toMatchObject({ gpuUcents: 0n, unpricedGpu: 'QUANTUM_Q1' });
    expect(costOf({ cpu: 1, memoryGb: 1, compute: 'CPU', gpuCount: 0 }, -5)).toEqual({ cpuUcents: 0n, memoryUcents: 0n, gpuUcents: 0n });
  });

  it('the configured price table matches the documented defaults and can be overridden', () => {
    expect(priceTable(loadConfig({}))).toEqual(DEFAULT_PRICES);
    expect(parseGpuPriceList(DEFAULT_GPU_PRICE_LIST)).toEqual(DEFAULT_PRICES.gpuSecondUsd);
    const t = priceTable(loadConfig({ PRICE_CPU_CORE_SECOND_USD: '0.00001', PRICE_GPU_SECOND_USD: 'AMPERE_A10=0.0005' }));
    expect(costOf({ cpu: 1, memoryGb: 0, compute: 'AMPERE_A10', gpuCount: 1 }, 1000, t)).toEqual({ cpuUcents: 1000n, memoryUcents: 0n, gpuUcents: 50000n });
    expect(() => parseGpuPriceList('A10:0.1')).toThrow(/PRICE_GPU_SECOND_USD/);
    expect(() => loadConfig({ PRICE_CPU_CORE_SECOND_USD: '-1' })).toThrow(/PRICE_CPU_CORE_SECOND_USD/);
  });
});
