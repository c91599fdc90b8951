import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent } from 'undici';

/**
 * Addresses a webhook must never reach unless explicitly allowed: this host, private networks,
 * link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254), CGNAT, multicast and reserved.
 */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv6');

/** IPv4 hidden in an IPv6 address (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged as IPv4. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const groups = expandIpv6(lower);
  if (!groups) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const isMapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const isNat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (isMapped || isNat64) return v4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]);
  return null;
}

function expandIpv6(address: string): number[] | null {
  if (address.includes('.')) return null;
  const [head, tail] = address.split('::');
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  const groups = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return NON_PUBLIC.check(bare, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    return v4 ? NON_PUBLIC.check(v4, 'ipv4') : NON_PUBLIC.check(bare, 'ipv6');
  }
  return true; // not an address at all: refuse rather than guess
}

export class WebhookEndpointError extends Error {}

export const DESTINATION_REFUSED = 'EWEBHOOKDESTINATION';

export type Lookup = typeof dnsLookup;

function resolveAll(lookup: Lookup, hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    lookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses as LookupAddress[])));
  });
}

/**
 * Request-time check of a webhookEndpoint: an absolute http(s) URL without credentials whose host
 * resolves only to public addresses (unless private destinations are allowed).
 */
export async function checkWebhookEndpoint(raw: string, opts: { allowPrivate: boolean; lookup?: Lookup }): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookEndpointError('webhookEndpoint must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookEndpointError(`webhookEndpoint must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username || url.password) throw new WebhookEndpointError('webhookEndpoint must not carry credentials; sign deliveries with X-Webhook-Secret instead');
  if (raw.length > 2048) throw new WebhookEndpointError('webhookEndpoint is longer than 2048 characters');
  if (opts.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    if (isNonPublicAddress(host)) throw new WebhookEndpointError(`webhookEndpoint ${host} is not a public address`);
    return url;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(opts.lookup ?? dnsLookup, host);
  } catch (err) {
    throw new WebhookEndpointError(`webhookEndpoint host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const bad = addresses.find((a) => isNonPublicAddress(a.address));
  if (bad) throw new WebhookEndpointError(`webhookEndpoint host ${host} resolves to ${bad.address}, which is not a public address`);
  return url;
}

/**
 * The same rule at connect time, inside the socket's own DNS lookup, so a name that resolved to a
 * public address when the run was accepted cannot be re-pointed at an internal one (DNS rebinding).
 */
export function guardedLookup(allowPrivate: boolean, lookup: Lookup = dnsLookup) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: (...args: any[]) => void) => {
    lookup(hostname, { ...options, all: true }, (err, result) => {
      if (err) return callback(err);
      const addresses = result as unknown as LookupAddress[];
      const bad = allowPrivate ? undefined : addresses.find((a) => isNonPublicAddress(a.address));
      if (bad) {
        const refused = Object.assign(new Error(`webhook destination ${hostname} resolves to ${bad.address}, which is not a public address`), { code: DESTINATION_REFUSED });
        return callback(refused);
      }
      if (!addresses.length) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** undici dispatcher for deliveries: guarded lookup, no redirect following (undici never follows by default). */
export function createWebhookDispatcher(opts: { allowPrivate: boolean; lookup?: Lookup; connections?: number }): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(opts.allowPrivate, opts.lookup) as never },
    connections: opts.connections ?? 32,
    keepAliveTimeout: 10_000,
    // The per-attempt timeout is ours (an AbortSignal); these only back it up.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}
