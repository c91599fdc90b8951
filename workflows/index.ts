export { runAppWorkflow } from './run-app.js';
export { pruneRunPayloadsWorkflow } from './prune-run-payloads.js';
export { deliverWebhookWorkflow } from './deliver-webhook.js';
