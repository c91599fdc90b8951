// Self-contained (node:crypto only) so a receiver can copy this one file into its own code base.
import { createHmac, timingSafeEqual } from 'node:crypto';

const REQUEST_ID_HEADER = 'x-request-id';
const TIMESTAMP_HEADER = 'x-service-webhook-timestamp';
const SIGNATURE_HEADER = 'x-service-webhook-signature';

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type VerifyResult =
  | { ok: true; requestId: string; timestamp: number }
  | { ok: false; reason: string };

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a runhook webhook delivery. `body` must be the raw request bytes exactly as received
 * (re-serialising parsed JSON changes them). The signature is compared in constant time, and a
 * timestamp further than `toleranceSeconds` from now (either way) is refused, limiting replays.
 */
export function verifyWebhook(opts: {
  secret: string | Buffer;
  headers: WebhookHeaders;
  body: Buffer | Uint8Array | string;
  toleranceSeconds?: number;
  nowSeconds?: number;
}): VerifyResult {
  const tolerance = opts.toleranceSeconds ?? 300;
  const requestId = header(opts.headers, REQUEST_ID_HEADER);
  const timestampText = header(opts.headers, TIMESTAMP_HEADER);
  const signatureHeader = header(opts.headers, SIGNATURE_HEADER);
  if (!requestId || !timestampText || !signatureHeader) {
    return { ok: false, reason: `missing ${[!requestId && REQUEST_ID_HEADER, !timestampText && TIMESTAMP_HEADER, !signatureHeader && SIGNATURE_HEADER].filter(Boolean).join(', ')}` };
  }
  if (!/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: 'timestamp is not unix seconds' };
  const timestamp = Number(timestampText);
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > tolerance) return { ok: false, reason: `timestamp is more than ${tolerance} s away from now` };
  // Several space-separated signatures are accepted, so a sender can sign with an old and a new secret.
  const candidates = signatureHeader.split(' ').filter((s) => s.startsWith('v1,')).map((s) => s.slice(3));
  if (!candidates.length) return { ok: false, reason: 'no v1 signature' };
  const body = typeof opts.body === 'string' ? Buffer.from(opts.body, 'utf8') : Buffer.from(opts.body.buffer, opts.body.byteOffset, opts.body.byteLength);
  const expected = Buffer.from(createHmac('sha256', opts.secret).update(`${requestId}.${timestampText}.`).update(body).digest('hex'), 'utf8');
  let match = false;
  for (const c of candidates) {
    const given = Buffer.from(c, 'utf8');
    // timingSafeEqual needs equal lengths; the length of a hex digest is public anyway.
    if (given.length === expected.length && timingSafeEqual(given, expected)) match = true;
  }
  return match ? { ok: true, requestId, timestamp } : { ok: false, reason: 'signature does not match' };
}
