import type { Static } from '@sinclair/typebox';
import type { AppView } from '../../../api/schemas/apps.js';
import type { CostsEntry as CostsEntrySchema, DashboardMetrics as DashboardMetricsSchema, RequestsEntry as RequestsEntrySchema } from '../../../api/schemas/dashboard-metrics.js';
import type { RunViewT } from '../../../api/schemas/runs.js';

/** What the API answered with a non-2xx status: its {"message"} is shown as it comes. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const TOKEN_KEY = 'runhook.token';

/** The token lives in sessionStorage only: gone with the tab, never in the URL or localStorage. */
export const tokenStore = {
  get: (): string => sessionStorage.getItem(TOKEN_KEY) ?? '',
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export async function apiGet<T>(path: string, params: Record<string, string> = {}): Promise<T> {
  const qs = new URLSearchParams(params).toString();
  let res: Response;
  try {
    res = await fetch(qs ? `${path}?${qs}` : path, { headers: { authorization: `Bearer ${tokenStore.get()}` } });
  } catch {
    throw new ApiError(0, 'the API cannot be reached');
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: shown as text below.
  }
  if (!res.ok) {
    const message = (body as { message?: string } | null)?.message ?? (text || res.statusText);
    throw new ApiError(res.status, message);
  }
  return body as T;
}

// The API's own TypeBox schemas, as types only (erased from the bundle): the page cannot drift
// from what the endpoints answer.
export type AppInfo = Static<typeof AppView>;
export type RequestsEntry = Static<typeof RequestsEntrySchema>;
export type CostsEntry = Static<typeof CostsEntrySchema>;
export type DashboardMetrics = Static<typeof DashboardMetricsSchema>;
export type RunRow = RunViewT;

export interface DashboardConfig {
  temporal_ui_url: string;
  temporal_namespace: string;
}
