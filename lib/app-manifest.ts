import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseToml, TomlError } from 'smol-toml';

export const MAX_GRACE_PERIOD_SECONDS = 43_200;
export const DEFAULT_GRACE_PERIOD_SECONDS = 900;

const Manifest = Type.Object(
  {
    app: Type.Object(
      {
        name: Type.String({ pattern: '^[a-z0-9-]{1,63}$', description: 'lowercase letters, digits and -, 1 to 63 characters' }),
        url: Type.String({ minLength: 1, description: 'absolute http(s) URL of the function' }),
      },
      { additionalProperties: false },
    ),
    hardware: Type.Object(
      {
        cpu: Type.Number({ exclusiveMinimum: 0, maximum: 256, description: 'CPU cores' }),
        memory: Type.Number({ exclusiveMinimum: 0, maximum: 4096, description: 'memory in GB' }),
        compute: Type.String({ pattern: '^[A-Z0-9_]{1,64}$', description: '"CPU" or a GPU type such as "AMPERE_A10"' }),
        gpu_count: Type.Integer({ minimum: 0, maximum: 64 }),
      },
      { additionalProperties: false },
    ),
    scaling: Type.Optional(
      Type.Object(
        { response_grace_period: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_GRACE_PERIOD_SECONDS })) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export interface AppDefinition {
  name: string;
  url: string;
  cpu: number;
  memoryGb: number;
  compute: string;
  gpuCount: number;
  responseGracePeriod: number;
}

export class ManifestError extends Error {}

function fieldOf(path: string): string {
  return path.replace(/^\//, '').replace(/\//g, '.') || '(root)';
}

/** Parses an app.toml; every problem is reported with the field it concerns. */
export function parseAppManifest(text: string): AppDefinition {
  let doc: unknown;
  try {
    doc = parseToml(text);
  } catch (err) {
    const e = err as TomlError;
    throw new ManifestError(`invalid TOML${e.line ? ` at line ${e.line}` : ''}: ${e.message.split('\n')[0]}`);
  }
  const first = [...Value.Errors(Manifest, doc)][0];
  if (first) {
    const schema = first.schema as { description?: string };
    const hint = schema.description ? ` (${schema.description})` : '';
    throw new ManifestError(`${fieldOf(first.path)}: ${first.message}${hint}`);
  }
  const m = doc as Static<typeof Manifest>;
  let url: URL;
  try {
    url = new URL(m.app.url);
  } catch {
    throw new ManifestError('app.url: must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ManifestError('app.url: must use http or https');
  if (m.hardware.compute === 'CPU' && m.hardware.gpu_count !== 0) {
    throw new ManifestError('hardware.gpu_count: must be 0 when hardware.compute is "CPU"');
  }
  if (m.hardware.compute !== 'CPU' && m.hardware.gpu_count < 1) {
    throw new ManifestError(`hardware.gpu_count: must be at least 1 for GPU type "${m.hardware.compute}"`);
  }
  return {
    name: m.app.name,
    url: url.toString(),
    cpu: m.hardware.cpu,
    memoryGb: m.hardware.memory,
    compute: m.hardware.compute,
    gpuCount: m.hardware.gpu_count,
    responseGracePeriod: m.scaling?.response_grace_period ?? DEFAULT_GRACE_PERIOD_SECONDS,
  };
}
