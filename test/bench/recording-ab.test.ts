import { describe, expect, it } from 'vitest';
import { compareRecording } from '../../bench/recording-ab.js';

describe('compareRecording (the bench A/B test with an A/A control)', () => {
  it('rotates the order every round so each target goes first, second and third equally often', async () => {
    const calls: string[] = [];
    await compareRecording(3, 1, async (t) => {
      calls.push(t);
      return { rps: 100, cpuUsPerRequest: 10 };
    });
    expect(calls).toEqual(['on', 'off', 'control', 'off', 'control', 'on', 'control', 'on', 'off']);
  });

  it('compares on with the mean of both off processes and reads the A/A spread between them', async () => {
    const rps = { on: 90, off: 110, control: 90 };
    const r = await compareRecording(3, 1, async (t) => ({ rps: rps[t], cpuUsPerRequest: t === 'on' ? 30 : 20 }));
    expect(r.onVsOff.median).toBe(0.9);
    expect(r.aa.median).toBe(0.818);
    expect(r.cpuAddedUs.median).toBe(10);
    expect(r.cpuAaUs.median).toBe(0);
    expect(r.cells).toHaveLength(3);
  });

  it('says measurably slower only when the on/off median lies below the A/A interquartile range', async () => {
    // The two off processes swing ±5 % around each other; recording on is 20 % slower every round.
    const offSwing = [1.05, 0.95, 1, 1.04, 0.96, 1];
    let round = -1;
    const slower = await compareRecording(6, 1, async (t) => {
      if (t === 'on') return { rps: 800, cpuUsPerRequest: 25 };
      if (t === 'off') round++;
      return { rps: t === 'off' ? 1000 : 1000 * offSwing[Math.max(0, round)], cpuUsPerRequest: 20 };
    });
    expect(slower.notMeasurablySlower).toBe(false);

    round = -1;
    const same = await compareRecording(6, 1, async (t) => {
      if (t === 'off') round++;
      return { rps: t === 'control' ? 1000 * offSwing[Math.max(0, round)] : 1000, cpuUsPerRequest: 20 };
    });
    expect(same.notMeasurablySlower).toBe(true);
    expect(same.onVsOff.median).toBeGreaterThan(0.97);
  });
});
