// Wall-clock time in an IANA zone to an instant, with the browser's Intl data: no zone library
// needed in the bundle for the one conversion the custom range needs.

function offsetMs(instant: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** "2027-03-01T00:00" read as wall time in `zone` → RFC 3339 UTC. */
export function wallTimeToIso(wall: string, zone: string): string {
  const naive = Date.parse(`${wall.length === 16 ? `${wall}:00` : wall}Z`);
  if (Number.isNaN(naive)) throw new Error(`not a date and time: ${wall}`);
  let instant = naive - offsetMs(naive, zone);
  // Once more at the result: right across an offset change.
  instant = naive - offsetMs(instant, zone);
  return new Date(instant).toISOString();
}

export function isValidZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
