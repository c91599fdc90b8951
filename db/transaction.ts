import pg from 'pg';

/**
 * Runs `work` inside BEGIN … COMMIT on one client: a client of `db` when it is a pool (released
 * afterwards), or `db` itself when it is already a client. Any error rolls back and is rethrown.
 */
export async function withTransaction<T>(db: pg.Pool | pg.ClientBase, work: (client: pg.ClientBase) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = db instanceof pg.Pool ? await db.connect() : db;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    if (client !== db) (client as pg.PoolClient).release();
  }
}
