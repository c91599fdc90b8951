import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { keyId, parseCodecKey } from './payload-codec.js';

// Layout: version(1) | key id(8) | iv(12) | ciphertext | tag(16). The run id is authenticated data,
// so a sealed secret copied onto another run's row does not open.
const VERSION = 1;
const KEY_ID_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretUnavailableError extends Error {}

/** Encrypts a webhook secret for storage in PostgreSQL with the payload codec key. */
export function sealWebhookSecret(codecKeyBase64: string, runId: string, secret: string): Buffer {
  if (!codecKeyBase64) throw new SecretUnavailableError('PAYLOAD_CODEC_KEY is not set, so webhook secrets cannot be stored safely');
  const key = parseCodecKey(codecKeyBase64);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(runId, 'utf8'));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), Buffer.from(keyId(key), 'hex'), iv, body, cipher.getAuthTag()]);
}

export function openWebhookSecret(codecKeyBase64: string, runId: string, sealed: Buffer): string {
  if (!codecKeyBase64) throw new SecretUnavailableError('PAYLOAD_CODEC_KEY is not set on this worker; the webhook secret cannot be read');
  const key = parseCodecKey(codecKeyBase64);
  if (sealed[0] !== VERSION) throw new SecretUnavailableError(`unknown sealed secret version ${sealed[0]}`);
  const id = sealed.subarray(1, 1 + KEY_ID_BYTES).toString('hex');
  if (id !== keyId(key)) throw new SecretUnavailableError(`the webhook secret was sealed with key ${id}, this worker has key ${keyId(key)}`);
  const ivAt = 1 + KEY_ID_BYTES;
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(ivAt, ivAt + IV_BYTES));
  decipher.setAAD(Buffer.from(runId, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(ivAt + IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretUnavailableError('the stored webhook secret does not authenticate (tampered, or sealed for another run)');
  }
}
