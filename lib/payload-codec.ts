import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
// Default import: @temporalio/proto is CommonJS and plain Node ESM (tsx, npm start) cannot see its named exports.
import proto from '@temporalio/proto';

const { temporal } = proto;

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('utf8') : '');

/** Short public name of a key, stored beside each ciphertext so a wrong key is reported as such. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('runhook-payload-codec\0').update(key).digest('hex').slice(0, 16);
}

export function parseCodecKey(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error('payload codec key must be 32 bytes (base64)');
  return key;
}

/**
 * Encrypts every payload with AES-256-GCM before it reaches Temporal, so run inputs (webhook
 * endpoints, app URLs) and anything else in history or the Web UI is unreadable without the key.
 * Payloads that are not ours (recorded before a key was configured) pass through on decode, so
 * old histories still replay.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  readonly keyId: string;

  constructor(private readonly key: Buffer) {
    this.keyId = keyId(key);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', this.key, iv);
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8(this.keyId) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
      const id = text(payload.metadata?.[KEY_ID_METADATA]);
      if (id !== this.keyId) throw new Error(`payload was encrypted with key ${id}, this process has key ${this.keyId} (PAYLOAD_CODEC_KEY differs)`);
      const data = Buffer.from(payload.data ?? new Uint8Array());
      const decipher = createDecipheriv('aes-256-gcm', this.key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}

/** The data converter every client and worker uses; without a key, payloads stay plaintext. */
export function dataConverterFor(codecKeyBase64: string): DataConverter {
  return codecKeyBase64 ? { payloadCodecs: [new AesGcmPayloadCodec(parseCodecKey(codecKeyBase64))] } : {};
}
