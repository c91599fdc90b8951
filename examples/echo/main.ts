import { startEchoApp } from './echo-app.js';

const port = Number(process.env.ECHO_PORT ?? 9000);
const app = await startEchoApp(port, process.env.ECHO_HOST ?? '127.0.0.1');
console.log(JSON.stringify({ level: 'info', msg: 'echo app listening', url: app.url }));
const stop = () => void app.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
