// Bulk writes send columns as compact array literals ("{1,2,NULL}") and times as epoch
// milliseconds: building those strings costs the API a fraction of pg's per-element array
// serialisation (ISO or local-time text for every Date), and PostgreSQL parses integer arrays
// faster than timestamp text. Times stay exact to the millisecond.

/** An integer array literal of `value` over `items` (numbers are rounded; null and undefined become NULL). */
export function intArrayLiteral<T>(items: readonly T[], value: (item: T) => number | bigint | null | undefined): string {
  let out = '{';
  for (let i = 0; i < items.length; i++) {
    const v = value(items[i]);
    if (i > 0) out += ',';
    out += v === null || v === undefined ? 'NULL' : typeof v === 'bigint' ? v.toString() : Math.round(v).toString();
  }
  return out + '}';
}

/** SQL turning a bigint column of epoch milliseconds back into timestamptz. */
export const epochMsToTimestamptz = (column: string): string => `timestamptz 'epoch' + ${column} * interval '1 millisecond'`;
