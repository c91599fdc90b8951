// `npm run bench <name> [options]`: dispatches to one benchmark by name.
// No name runs the run-path benchmark (sync overhead and async accept).
const [name = 'run', ...rest] = process.argv.slice(2);

async function runPath(argv: string[]) {
  const { runRunPathBench, printRunPathResult } = await import('./run-path.js');
  const result = await runRunPathBench(argv);
  printRunPathResult(result);
  const { mkdir, writeFile } = await import('node:fs/promises');
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  const file = new URL(`./results/run-path-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
  await writeFile(file, JSON.stringify(result, null, 2));
  console.log(`written ${file.pathname}`);
  return result;
}

const benches: Record<string, (argv: string[]) => Promise<unknown>> = {
  run: runPath,
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
