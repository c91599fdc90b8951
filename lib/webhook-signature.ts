import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-webhook-signature';
export const TIMESTAMP_HEADER = 'x-service-webhook-timestamp';
export const REQUEST_ID_HEADER = 'x-request-id';

/** Lowercase hex HMAC-SHA256 of `<request_id>.<timestamp>.<body>`, over the exact body bytes sent. */
export function webhookSignature(secret: string | Buffer, requestId: string, timestamp: number | string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(`${requestId}.${timestamp}.`).update(body).digest('hex');
}

/** The signature headers of one attempt: the timestamp is that attempt's own send time. */
export function signatureHeaders(secret: string, requestId: string, body: Buffer, nowMs = Date.now()): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: `v1,${webhookSignature(secret, requestId, timestamp, body)}`,
  };
}
