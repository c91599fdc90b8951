import uPlot, { type AlignedData, type Options } from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Layer {
  label: string;
  color: string;
  values: number[];
}

/**
 * A stacked bar chart on uPlot, which draws series but does not stack them: each layer is drawn as
 * the running sum up to it, bottom layer last, so the visible slice of each bar is that layer's
 * share. The legend shows each layer's own value, not the running sum.
 */
export function stackedBars(el: HTMLElement, opts: { xs: number[]; layers: Layer[]; zone: string; format: (v: number) => string }): uPlot {
  const { xs, layers } = opts;
  const sums: number[][] = [];
  layers.forEach((layer, i) => sums.push(layer.values.map((v, j) => v + (i ? sums[i - 1][j] : 0))));
  const order = layers.map((_, i) => i).reverse();
  // An empty bucket draws nothing (a zero-height bar would still paint a line on the axis).
  const data: AlignedData = [xs, ...order.map((i) => sums[i].map((v) => (v > 0 ? v : null)))];
  const bars = uPlot.paths.bars!({ size: [0.8, 48], align: 0 });
  const options: Options = {
    width: Math.max(280, el.clientWidth),
    height: 240,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), opts.zone),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [{}, { values: (_u, ticks) => ticks.map(opts.format), size: 70 }],
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    series: [
      {},
      ...order.map((i) => ({
        label: layers[i].label,
        stroke: layers[i].color,
        fill: layers[i].color,
        paths: bars,
        points: { show: false },
        value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) => (idx === null ? '–' : opts.format(layers[i].values[idx])),
      })),
    ],
  };
  el.replaceChildren();
  return new uPlot(options, data, el);
}
