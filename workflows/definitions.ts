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
}

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
