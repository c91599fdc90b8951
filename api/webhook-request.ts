import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import { checkWebhookEndpoint, WebhookEndpointError } from '../lib/webhook-destination.js';
import { sealWebhookSecret } from '../lib/webhook-secret-box.js';
import type { WebhookRequest } from './run-launcher.js';

const MAX_SECRET_LENGTH = 1024;

const httpError = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });

/**
 * The webhook a run request asks for, validated (absolute http(s) URL, public destination unless
 * allowed) and with X-Webhook-Secret sealed at once, so the plaintext goes no further than here.
 */
export async function webhookRequestOf(config: Config, request: FastifyRequest, endpoint: string | undefined, runId: string): Promise<WebhookRequest | null> {
  if (endpoint === undefined) return null;
  try {
    await checkWebhookEndpoint(endpoint, { allowPrivate: config.webhookAllowPrivateDestinations });
  } catch (err) {
    if (err instanceof WebhookEndpointError) throw httpError(400, err.message);
    throw err;
  }
  const header = request.headers['x-webhook-secret'];
  const secret = Array.isArray(header) ? header[0] : header;
  if (secret === undefined) return { endpoint, secretSealed: null };
  if (secret.length === 0 || secret.length > MAX_SECRET_LENGTH) throw httpError(400, `X-Webhook-Secret must be 1 to ${MAX_SECRET_LENGTH} characters`);
  if (!config.payloadCodecKey) {
    // Refused rather than stored or sent through Temporal in plaintext.
    throw httpError(503, 'signed webhooks are unavailable: this server has no PAYLOAD_CODEC_KEY to keep X-Webhook-Secret encrypted');
  }
  return { endpoint, secretSealed: sealWebhookSecret(config.payloadCodecKey, runId, secret) };
}
