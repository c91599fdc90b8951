import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { AesGcmPayloadCodec, parseCodecKey } from '../../lib/payload-codec.js';

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});

const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

/** The Web UI may be opened as 127.0.0.1 or localhost; both are the same local UI. */
function allowedOrigins(uiUrl: string): Set<string> {
  const url = new URL(uiUrl);
  const origins = new Set([url.origin]);
  for (const alias of ['127.0.0.1', 'localhost']) {
    if (url.hostname === '127.0.0.1' || url.hostname === 'localhost') origins.add(`${url.protocol}//${alias}${url.port ? `:${url.port}` : ''}`);
  }
  return origins;
}

/**
 * Temporal's remote codec protocol (POST /codec/encode and /codec/decode with {"payloads": [...]}),
 * so an operator's Web UI (--ui-codec-endpoint <api>/codec) shows encrypted payloads in clear.
 * Whoever reaches it can decrypt, so it is off by default and belongs behind access control.
 */
const payloadCodecRoute: FastifyPluginAsync = async (app) => {
  if (!app.config.payloadCodecEndpoint) return;
  const codec: PayloadCodec | null = app.config.payloadCodecKey ? new AesGcmPayloadCodec(parseCodecKey(app.config.payloadCodecKey)) : null;
  const origins = allowedOrigins(app.config.temporalUiUrl);

  function cors(request: FastifyRequest, reply: FastifyReply) {
    const origin = request.headers.origin;
    if (origin && origins.has(origin)) {
      reply.header('access-control-allow-origin', origin).header('vary', 'Origin')
        .header('access-control-allow-methods', 'POST, OPTIONS')
        .header('access-control-allow-headers', 'content-type, x-namespace, authorization')
        .header('access-control-allow-credentials', 'true')
        .header('access-control-max-age', '600');
    }
  }

  for (const op of ['encode', 'decode'] as const) {
    app.options(`/codec/${op}`, { schema: { hide: true } }, async (request, reply) => {
      cors(request, reply);
      return reply.code(204).send();
    });
    app.post(`/codec/${op}`, { schema: { hide: true } }, async (request, reply) => {
      cors(request, reply);
      const body = request.body as { payloads?: JsonPayload[] } | undefined;
      if (!body || !Array.isArray(body.payloads)) throw app.httpErrors.badRequest('expected {"payloads": [...]}');
      const payloads = body.payloads.map(fromJson);
      let out = payloads;
      try {
        if (codec) out = await (op === 'encode' ? codec.encode(payloads) : codec.decode(payloads));
      } catch (err) {
        throw app.httpErrors.badRequest(`cannot ${op}: ${(err as Error).message}`);
      }
      return { payloads: out.map(toJson) };
    });
  }
};

export default payloadCodecRoute;
