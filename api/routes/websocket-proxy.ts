import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { v7 as uuidv7 } from 'uuid';
import WebSocket from 'ws';
import { createAppLookup } from '../app-lookup.js';
import { authErrors, errorResponse } from '../schemas/common.js';

const WsParams = Type.Object({
  project_id: Type.String({ minLength: 1, maxLength: 200 }),
  app_name: Type.String({ minLength: 1, maxLength: 63 }),
  '*': Type.String(),
});

// Codes a peer may not send in a close frame (they only describe what happened locally).
const RESERVED = new Set([1004, 1005, 1006, 1015]);
const sendable = (code: number) => (code >= 1000 && code <= 4999 && !RESERVED.has(code) ? code : 1011);

/** The app's WebSocket address for a path: its url with the ws scheme, that path and query. */
export function upstreamUrl(appUrl: string, path: string, search: string): string {
  const u = new URL(appUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = `/${path}`;
  u.search = search;
  return u.toString();
}

const websocketProxy: FastifyPluginAsyncTypebox = async (app) => {
  const findApp = createAppLookup(app.repos.apps);

  app.route({
    method: 'GET',
    url: '/v4/:project_id/:app_name/*',
    schema: {
      tags: ['runs'],
      operationId: 'openAppWebSocket',
      summary: 'WebSocket to an app: an upgrade request is proxied to the app, both ways',
      description: 'Proxied to the app url with the ws scheme and the same path. The close code is recorded for the dashboard; WebSocket requests are never forwarded to webhooks.',
      params: WsParams,
      response: {
        101: Type.Null({ description: 'Switching Protocols: the WebSocket is open and proxied to the app.' }),
        ...authErrors,
        404: errorResponse('Unknown app, or not a WebSocket upgrade request.'),
      },
    },
    handler: async (request) => {
      throw app.httpErrors.notFound(`no route for GET ${request.url.split('?')[0]}; only WebSocket upgrades are served here`);
    },
    wsHandler: async (client, request) => {
      // Listen before any await: frames that arrive while the app is looked up must not be lost.
      const pending: { data: WebSocket.RawData; binary: boolean }[] = [];
      let upstream: WebSocket | null = null;
      client.on('message', (data, binary) => {
        if (upstream?.readyState === WebSocket.OPEN) upstream.send(data, { binary });
        else pending.push({ data, binary });
      });
      const { project_id: projectId, app_name: appName } = request.params as { project_id: string; app_name: string; '*': string };
      const target = await findApp(projectId, appName);
      if (!target) {
        client.close(4404, `app ${appName} not found`);
        return;
      }
      const runId = uuidv7();
      const started = Date.now();
      const search = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
      upstream = new WebSocket(upstreamUrl(target.url, (request.params as { '*': string })['*'], search), {
        headers: { 'x-request-id': runId },
      });
      let recorded = false;
      // One event per connection: the first close code seen, from whichever side closed first.
      const record = (code: number | null) => {
        if (recorded) return;
        recorded = true;
        app.events.recordRun(target, { ts: new Date(), status: null, wsCloseCode: code, async: false, runTimeMs: Date.now() - started });
      };

      upstream.on('open', () => {
        for (const m of pending.splice(0)) upstream!.send(m.data, { binary: m.binary });
      });
      upstream.on('message', (data, binary) => {
        if (client.readyState === WebSocket.OPEN) client.send(data, { binary });
      });
      upstream.on('close', (code, reason) => {
        record(code);
        if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING) client.close(sendable(code), reason);
      });
      upstream.on('error', (err) => {
        request.log.warn({ err, run_id: runId }, 'websocket to app failed');
        if (upstream.readyState !== WebSocket.OPEN) {
          // Never connected: the app is unreachable, which is a request without a status.
          record(null);
          if (client.readyState === WebSocket.OPEN) client.close(1011, 'app unreachable');
        }
      });
      client.on('close', (code, reason) => {
        record(code);
        if (upstream!.readyState === WebSocket.OPEN) upstream!.close(sendable(code), reason);
        else if (upstream!.readyState === WebSocket.CONNECTING) upstream!.terminate();
      });
    },
  });
};

export default websocketProxy;
