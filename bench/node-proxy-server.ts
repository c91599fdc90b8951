// The least a Node gateway can do per request, for the sync benchmark's "node proxy" row: node:http
// in, the same undici dispatch as lib/app-client.ts out, the answer passed back. No auth, no
// routing, no run log, no events: the floor under /run on the same Node and machine.
import http from 'node:http';
import { callApp, createAppDispatcher } from '../lib/app-client.js';

const target = process.env.NODE_PROXY_TARGET;
const portArg = process.env.PORT;
if (!target || !portArg) {
  console.error('node-proxy-server.ts needs NODE_PROXY_TARGET (the app url) and PORT');
  process.exit(2);
}
const dispatcher = createAppDispatcher();
let seq = 0;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    callApp({ url: target, runId: String(++seq), body: Buffer.concat(chunks), dispatcher }).then(
      (answer) => {
        res.writeHead(answer.statusCode, answer.contentType ? { 'content-type': answer.contentType } : {});
        res.end(answer.body);
      },
      (err: Error) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: err.message }));
      },
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(portArg), '127.0.0.1', () => console.log(`node proxy listening on ${portArg}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
