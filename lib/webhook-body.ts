import type { RunRecord } from '../db/repositories/runs.js';

const TEXT_TYPE = /^(text\/|application\/(json|[\w.+-]+\+json|xml|[\w.+-]+\+xml|javascript|x-www-form-urlencoded)\b)/i;
const JSON_TYPE = /^application\/(json|[\w.+-]+\+json)\b/i;

/** The app's response as a JSON value: raw JSON bytes spliced in untouched, text as a string, other bytes as base64. */
function responseJson(response: { contentType: string | null; body: Buffer } | null): { value: string; base64: boolean } {
  if (!response) return { value: 'null', base64: false };
  const ct = response.contentType ?? '';
  const text = response.body.toString('utf8');
  if (!ct || JSON_TYPE.test(ct)) {
    try {
      JSON.parse(text);
      // Splicing the app's own bytes keeps numbers like 12345678901234567890 exact (a parse/stringify round trip would not).
      return { value: text.trim(), base64: false };
    } catch {
      // not JSON after all: sent as a string below
    }
  }
  if (!ct || TEXT_TYPE.test(ct)) return { value: JSON.stringify(text), base64: false };
  return { value: JSON.stringify(response.body.toString('base64')), base64: true };
}

/**
 * The delivered body: everything the service knows about the run, the app's response last. Built
 * only from stored data (timestamp = when the run finished), so every attempt and every
 * redelivery sends the same bytes.
 */
export function buildWebhookBody(run: RunRecord, response: { contentType: string | null; body: Buffer } | null): Buffer {
  const head = {
    run_id: run.runId,
    app_id: run.appId,
    async: run.async,
    status: run.status,
    status_code: run.statusCode,
    run_time_ms: run.runTimeMs,
    timestamp: (run.finishedAt ?? run.createdAt).toISOString(),
    error: run.error,
    content_type: response?.contentType ?? null,
  };
  const { value, base64 } = responseJson(response);
  const extra = base64 ? ',"response_encoding":"base64"' : '';
  const json = JSON.stringify(head);
  return Buffer.concat([Buffer.from(`${json.slice(0, -1)}${extra},"response":`, 'utf8'), Buffer.from(value, 'utf8'), Buffer.from('}')]);
}
