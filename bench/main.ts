// `npm run bench <name> [options]`: dispatches to one benchmark by name.
const [name, ...rest] = process.argv.slice(2);

const benches: Record<string, (argv: string[]) => Promise<unknown>> = {
  metrics: async (argv) => {
    const { runMetricsBench, parseMetricsBenchArgs } = await import('./metrics.js');
    return runMetricsBench(parseMetricsBenchArgs(argv));
  },
};

const run = name ? benches[name] : undefined;
if (!run) {
  console.error(`usage: npm run bench <${Object.keys(benches).join('|')}> [options]`);
  process.exitCode = 2;
} else {
  await run(rest);
}
