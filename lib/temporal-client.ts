import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config/config.js';

export async function createTemporalClient(config: Pick<Config, 'temporalAddress' | 'temporalNamespace'>): Promise<Client> {
  const connection = await Connection.connect({ address: config.temporalAddress });
  return new Client({ connection, namespace: config.temporalNamespace });
}
