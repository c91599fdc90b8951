import './style.css';
import { ApiError, apiGet, tokenStore, type AppInfo, type DashboardConfig, type DashboardMetrics, type RunRow } from './api.js';
import { stackedBars } from './charts.js';
import { count, dollars, duration, when } from './format.js';
import { isValidZone, wallTimeToIso } from './zone-time.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const form = $<HTMLFormElement>('auth');
const tokenInput = $<HTMLInputElement>('token');
const projectInput = $<HTMLInputElement>('project');
const appSelect = $<HTMLSelectElement>('app');
const period = $<HTMLSelectElement>('period');
const interval = $<HTMLSelectElement>('interval');
const tzInput = $<HTMLInputElement>('tz');
const startInput = $<HTMLInputElement>('start');
const endInput = $<HTMLInputElement>('end');
const errorBox = $<HTMLParagraphElement>('error');

let apps: AppInfo[] = [];
let config: DashboardConfig | null = null;
let loadSeq = 0;
// What is on screen, redrawn at the new width on resize without asking the API again.
let shown: { metrics: DashboardMetrics; zone: string } | null = null;

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
tzInput.value = browserZone;
tokenInput.value = tokenStore.get();
// The project id is not a secret; remembering it saves typing. The token is never stored beyond the tab.
projectInput.value = localStorage.getItem('runhook.project') ?? '';
const zones = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
$('zones').replaceChildren(...zones.map((z) => Object.assign(document.createElement('option'), { value: z })));

function showError(message: string | null) {
  errorBox.hidden = message === null;
  errorBox.textContent = message ?? '';
}

function explain(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 401) return `Token rejected: ${err.message}`;
    if (err.status === 403) return `This token cannot read project ${projectInput.value}: ${err.message}`;
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

async function loadApps() {
  const project = projectInput.value.trim();
  localStorage.setItem('runhook.project', project);
  config ??= await apiGet<DashboardConfig>('/dashboard/config.json');
  const res = await apiGet<{ apps: AppInfo[] }>(`/v2/projects/${encodeURIComponent(project)}/apps`);
  apps = res.apps;
  appSelect.replaceChildren(...apps.map((a) => Object.assign(document.createElement('option'), { value: a.app_id, textContent: a.name })));
  $('controls').hidden = false;
  if (!apps.length) {
    $('board').hidden = true;
    throw new Error(`project ${project} has no apps yet`);
  }
}

function query(): Record<string, string> {
  const zone = tzInput.value.trim() || 'UTC';
  const q: Record<string, string> = { interval: interval.value, tz: zone };
  if (period.value === 'custom') {
    // Wall times are read in the chosen zone; the server checks the range and says what is wrong.
    if (!isValidZone(zone)) return { ...q, start: startInput.value, end: endInput.value };
    if (startInput.value) q.start = wallTimeToIso(startInput.value, zone);
    if (endInput.value) q.end = wallTimeToIso(endInput.value, zone);
  } else q.month = period.value;
  return q;
}

const REQUEST_LAYERS = [
  ['2xx', '2xx', '#2e9d5b'],
  ['4xx', '4xx', '#e0a526'],
  ['5xx', '5xx', '#d64545'],
  ['websocket_success', 'WebSocket ok', '#3a7bd5'],
  ['websocket_error', 'WebSocket error', '#8e44ad'],
  ['other', 'Other', '#8a8f98'],
] as const;
const COST_LAYERS = [
  ['gpu_cost_cents', 'GPU', '#8e44ad'],
  ['cpu_cost_cents', 'CPU', '#3a7bd5'],
  ['memory_cost_cents', 'Memory', '#2e9d5b'],
] as const;

function totals(el: HTMLElement, items: [string, string][]) {
  el.replaceChildren(
    ...items.flatMap(([label, value]) => {
      const wrap = document.createElement('div');
      wrap.append(Object.assign(document.createElement('dt'), { textContent: label }), Object.assign(document.createElement('dd'), { textContent: value }));
      return [wrap];
    }),
  );
}

function render(m: DashboardMetrics, zone: string) {
  const keys = Object.keys(m.requests);
  const xs = keys.map((k) => Date.parse(k) / 1000);
  const costRows = Object.values(m.costs);
  const t = m.request_totals;
  totals($('request-totals'), [['Requests', count(t.total)], ...REQUEST_LAYERS.map(([k, label]) => [label, count(t[k])] as [string, string])]);
  const c = m.cost_totals;
  totals($('cost-totals'), [
    ['Total', dollars(c.total_cost_cents)],
    ...COST_LAYERS.map(([k, label]) => [label, dollars(c[k])] as [string, string]),
    ['Running time', duration(c.total_running_time_ms)],
  ]);
  stackedBars($('requests-chart'), {
    xs, zone, format: (v) => count(Math.round(v)),
    layers: REQUEST_LAYERS.map(([k, label, color]) => ({ label, color, values: keys.map((key) => m.requests[key][k]) })),
  });
  stackedBars($('costs-chart'), {
    xs, zone, format: dollars,
    layers: COST_LAYERS.map(([k, label, color]) => ({ label, color, values: costRows.map((row) => row[k]) })),
  });
}

function renderRuns(runs: RunRow[], zone: string) {
  const ui = config ? `${config.temporal_ui_url.replace(/\/$/, '')}/namespaces/${encodeURIComponent(config.temporal_namespace)}/workflows/` : null;
  $('runs').querySelector('tbody')!.replaceChildren(
    ...runs.map((r) => {
      const tr = document.createElement('tr');
      const id = document.createElement('td');
      // Async runs are Temporal workflows (id = run id); sync runs never were.
      if (r.async && ui) id.append(Object.assign(document.createElement('a'), { href: ui + encodeURIComponent(r.run_id), textContent: r.run_id.slice(0, 13) + '…', title: 'Open in the Temporal Web UI', target: '_blank', rel: 'noopener noreferrer' }));
      else id.textContent = r.run_id.slice(0, 13) + '…';
      id.title = r.run_id;
      const cells = [
        `${r.status}${r.status_code !== null ? ` (${r.status_code})` : ''}`,
        r.async ? 'async' : 'sync',
        when(r.created_at, zone),
        duration(r.run_time_ms),
        r.webhook ? `${r.webhook.state} (${r.webhook.attempts})` : '–',
      ].map((text) => Object.assign(document.createElement('td'), { textContent: text }));
      tr.append(id, ...cells);
      tr.dataset.status = r.status;
      return tr;
    }),
  );
}

async function loadBoard() {
  const seq = ++loadSeq;
  const app = apps.find((a) => a.app_id === appSelect.value);
  if (!app) return;
  const project = projectInput.value.trim();
  const zone = tzInput.value.trim() || 'UTC';
  let q: Record<string, string>;
  try {
    q = query();
  } catch (err) {
    showError(explain(err));
    return;
  }
  try {
    const [metrics, runs] = await Promise.all([
      apiGet<DashboardMetrics>(`/v2/projects/${encodeURIComponent(project)}/apps/${encodeURIComponent(app.app_id)}/dashboard-metrics`, q),
      apiGet<{ runs: RunRow[] }>(`/v4/${encodeURIComponent(project)}/${encodeURIComponent(app.name)}/runs`, { limit: '20' }),
    ]);
    if (seq !== loadSeq) return;
    showError(null);
    $('board').hidden = false;
    shown = { metrics, zone };
    render(metrics, zone);
    renderRuns(runs.runs, zone);
    document.body.dataset.loaded = String(seq);
  } catch (err) {
    if (seq !== loadSeq) return;
    showError(explain(err));
  }
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  tokenStore.set(tokenInput.value.trim());
  void loadApps().then(loadBoard, (err) => showError(explain(err)));
});
$('forget').addEventListener('click', () => {
  tokenStore.clear();
  tokenInput.value = '';
});
period.addEventListener('change', () => {
  $('range').hidden = period.value !== 'custom';
  if (period.value !== 'custom') void loadBoard();
});
for (const el of [appSelect, interval, tzInput, startInput, endInput]) el.addEventListener('change', () => void loadBoard());
$('refresh').addEventListener('click', () => void loadBoard());
let resizeTimer: number | undefined;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => {
    if (shown && !$('board').hidden) render(shown.metrics, shown.zone);
  }, 200);
});
if (tokenInput.value && projectInput.value) form.requestSubmit();
