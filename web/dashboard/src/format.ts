export const count = (n: number) => n.toLocaleString('en-US');

/** Cents (fractional) as dollars with enough digits for tiny per-second prices. */
export function dollars(cents: number): string {
  const usd = cents / 100;
  if (usd === 0) return '$0.00';
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(3)}`;
}

export function duration(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h} h ${m} min` : `${m} min ${Math.round(s % 60)} s`;
}

export function when(iso: string, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'short', timeStyle: 'medium' }).format(new Date(iso));
}
