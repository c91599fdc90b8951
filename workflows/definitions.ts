// Names and shapes shared by workflows, activities, worker and client. Workflow-safe: no I/O imports.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  projectId: defineSearchAttributeKey('ProjectId', SearchAttributeType.KEYWORD),
  appId: defineSearchAttributeKey('AppId', SearchAttributeType.KEYWORD),
  appName: defineSearchAttributeKey('AppName', SearchAttributeType.KEYWORD),
  runStatus: defineSearchAttributeKey('RunStatus', SearchAttributeType.KEYWORD),
  runAsync: defineSearchAttributeKey('RunAsync', SearchAttributeType.BOOL),
} as const;

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failure' | 'cancelled' | 'timed_out';

/** Everything a run needs, passed in so the workflow never reads app config itself. */
export interface RunAppInput {
  runId: string;
  projectId: string;
  appId: string;
  appName: string;
  url: string;
  /** Bound of the run: the app's response_grace_period, never above the 12 h cap. */
  runTimeoutMs: number;
  /** How long a lost worker goes unnoticed before the app call is retried elsewhere. */
  heartbeatTimeoutMs: number;
  appCallTaskQueue: string;
  /** Present when the run request carried webhookEndpoint; absent keeps the command sequence of runs without one. */
  webhook?: RunWebhook;
}

/** Where the finished run is forwarded. The secret itself is sealed in PostgreSQL, never in history. */
export interface RunWebhook {
  endpoint: string;
  /** A sealed X-Webhook-Secret is stored with delivery 0, so deliveries are signed. */
  signed: boolean;
  taskQueue: string;
}

/** One delivery of a run's webhook: 0 is the original, 1.. are redeliveries. */
export interface DeliverWebhookInput {
  runId: string;
  delivery: number;
}

export interface DeliverWebhookResult {
  state: 'delivered' | 'failed';
  statusCode: number | null;
  attempts: number;
  error: string | null;
}

/** The delivery workflow's id: deterministic, so a retried start never delivers twice. */
export function webhookWorkflowId(runId: string, delivery: number): string {
  return delivery === 0 ? `webhook-${runId}` : `webhook-${runId}-${delivery}`;
}

export const WEBHOOK_MAX_ATTEMPTS = 3;
export const WEBHOOK_MAX_RETRY_DELAY_MS = 5_000;
/** Failure types of a delivery attempt that are never retried (other 4xx, 5xx, refused or unusable destination). */
export const WEBHOOK_REJECTED = 'WebhookRejected';
export const WEBHOOK_UNDELIVERABLE = 'WebhookUndeliverable';

/** Small outcome of the app call; the response body itself is in PostgreSQL under runId. */
export interface AppCallOutcome {
  statusCode: number | null;
  runTimeMs: number;
  error?: string;
}

export interface RunAppResult {
  runId: string;
  status: RunStatus;
  statusCode: number | null;
  runTimeMs: number | null;
}

export const APP_UNREACHABLE = 'AppUnreachable';
export const MAX_RUN_MS = 12 * 60 * 60 * 1000;
