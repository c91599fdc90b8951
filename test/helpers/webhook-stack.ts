import { afterAll, beforeAll } from 'vitest';
import type { ConfigName } from '../../config/config.js';
import { startEchoApp, type EchoApp } from '../../examples/echo/echo-app.js';
import { startStack, type Stack } from './stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

export interface WebhookStack {
  stack: Stack;
  echo: EchoApp;
  receiver: WebhookReceiver;
  /** A token of project `proj`, where the echo app is deployed as `echo`. */
  token: string;
}

/**
 * For a webhook test file: a stack with a worker, the echo app deployed as proj/echo and a real
 * receiver on loopback, started before the file's tests and stopped after them. The returned object
 * is filled in by then.
 */
export function useWebhookStack(env: Partial<Record<ConfigName, string>> = {}): WebhookStack {
  const ctx = {} as WebhookStack;
  beforeAll(async () => {
    ctx.stack = await startStack({ worker: true, env });
    ctx.echo = await startEchoApp();
    ctx.receiver = await startWebhookReceiver();
    ctx.token = await ctx.stack.token('proj');
    await ctx.stack.deploy('proj', { name: 'echo', url: ctx.echo.url });
  });
  afterAll(async () => {
    await ctx.receiver?.close();
    await ctx.echo?.close();
    await ctx.stack?.close();
  });
  return ctx;
}
