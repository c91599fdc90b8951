import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../workflows/definitions.js';

// The package is CommonJS: its namespace only arrives whole through the default import under plain Node ESM.
const { IndexedValueType } = proto.temporal.api.enums.v1;

/** Registers any of our custom search attributes the namespace lacks (idempotent). */
export async function ensureSearchAttributes(address: string, namespace: string): Promise<string[]> {
  const conn = await Connection.connect({ address });
  try {
    const existing = await conn.operatorService.listSearchAttributes({ namespace });
    const have = new Set(Object.keys(existing.customAttributes ?? {}));
    const missing: Record<string, number> = {};
    for (const key of Object.values(SEARCH_ATTRIBUTES)) {
      if (!have.has(key.name)) {
        missing[key.name] = key.type === 'BOOL' ? IndexedValueType.INDEXED_VALUE_TYPE_BOOL : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
      }
    }
    if (Object.keys(missing).length) await conn.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
    return Object.keys(missing);
  } finally {
    await conn.close();
  }
}
