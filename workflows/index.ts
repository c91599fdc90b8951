export { runAppWorkflow } from './run-app.js';
