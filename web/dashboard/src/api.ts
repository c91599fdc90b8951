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

export interface AppInfo {
  app_id: string;
  name: string;
  hardware: { compute: string; gpu_count: number };
}

export interface RequestsEntry {
  total: number;
  '2xx': number;
  '4xx': number;
  '5xx': number;
  websocket_success: number;
  websocket_error: number;
  other: number;
}

export interface CostsEntry {
  gpu_cost_cents: number;
  cpu_cost_cents: number;
  memory_cost_cents: number;
  total_cost_cents: number;
  total_running_time_ms: number;
}

export interface DashboardMetrics {
  requests: Record<string, RequestsEntry>;
  request_totals: RequestsEntry;
  costs: Record<string, CostsEntry>;
  cost_totals: CostsEntry;
  start_date: string;
  end_date: string;
  interval: string;
}

export interface RunRow {
  run_id: string;
  async: boolean;
  status: string;
  created_at: string;
  run_time_ms: number | null;
  status_code: number | null;
  webhook: { state: string; attempts: number } | null;
}

export interface DashboardConfig {
  temporal_ui_url: string;
  temporal_namespace: string;
}
