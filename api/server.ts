import { loadConfigOrExit } from '../config/config.js';
import { createPool } from '../db/pool.js';
import { createTemporalClient } from '../lib/temporal-client.js';
import { buildApp } from './app.js';

const config = loadConfigOrExit();
const pool = createPool(config.databaseUrl, config.databasePoolSize);
const temporal = await createTemporalClient(config);
const app = await buildApp({ config, pool, temporal, logger: { level: config.logLevel } });

let closing = false;
async function stop(signal: string) {
  if (closing) return;
  closing = true;
  app.log.info({ signal }, 'shutting down');
  await app.close();
  await temporal.connection.close();
  await pool.end();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));

await app.listen({ host: config.host, port: config.port });
