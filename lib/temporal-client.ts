import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config/config.js';
import { dataConverterFor } from './payload-codec.js';

export async function createTemporalClient(
  config: Pick<Config, 'temporalAddress' | 'temporalNamespace'> & Partial<Pick<Config, 'payloadCodecKey'>>,
): Promise<Client> {
  const connection = await Connection.connect({ address: config.temporalAddress });
  // Same codec as the workers: payloads are encrypted before they leave this process.
  return new Client({ connection, namespace: config.temporalNamespace, dataConverter: dataConverterFor(config.payloadCodecKey ?? '') });
}
