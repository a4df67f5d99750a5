import type { GeneratedFile } from './generated-file.js';

/** The import directions as eslint.config.js holds them: each layer and the layers it imports. */
export interface LayerTable {
  layers: Readonly<Record<string, readonly string[]>>;
  /** The one file of src/generated a layer reads. */
  generatedFile: Readonly<Record<string, readonly string[]>>;
  /** A layer it imports types from, and nothing else. */
  typesFrom: Readonly<Record<string, string>>;
}

const BEGIN = '<!-- layers: written by `npm run generate` from LAYERS in eslint.config.js; do not edit -->';
const END = '<!-- /layers -->';

/** How high a layer stands: one above the highest layer it imports (src/generated is data, at 0). */
function levels(layers: LayerTable['layers']): Map<string, number> {
  const level = new Map<string, number>();
  const of = (name: string, path: readonly string[]): number => {
    const known = level.get(name);
    if (known !== undefined) return known;
    if (path.includes(name)) throw new Error(`the layers import each other round: ${[...path, name].join(' → ')}`);
    const below = (layers[name] ?? []).map((dep) => of(dep, [...path, name]));
    const own = below.length === 0 ? 0 : Math.max(...below) + 1;
    level.set(name, own);
    return own;
  };
  for (const name of Object.keys(layers)) of(name, []);
  return level;
}

/**
 * The layer diagram: one line per layer, highest first, with what it may import; src/cli on top
 * (it may import every layer and nothing imports it).
 */
export function layerDiagram(table: LayerTable): string {
  const level = levels(table.layers);
  const names = Object.keys(table.layers).sort((a, b) => level.get(b)! - level.get(a)! || a.localeCompare(b));
  const width = Math.max(...names.map((name) => name.length), 'cli'.length);
  const line = (name: string, what: string) => `${name.padEnd(width)} ──► ${what}`;
  const lines = [line('cli', 'every layer (nothing imports cli)')];
  for (const name of names) {
    const deps = [...table.layers[name]!];
    const generated = table.generatedFile[name];
    const types = table.typesFrom[name];
    const what = [
      deps.length > 0 ? deps.join(', ') : 'nothing',
      ...(generated ?? []).map((file) => `generated/${file}`),
      ...(types ? [`types from ${types}`] : []),
    ];
    lines.push(line(name, what.join('; ')));
  }
  return ['```', ...lines, '```'].join('\n');
}

/** ARCHITECTURE.md with its diagram block written from the table; the text around it is kept. */
export function architectureWithDiagram(text: string, table: LayerTable): GeneratedFile {
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`ARCHITECTURE.md has no layer diagram block (${BEGIN} … ${END})`);
  return {
    path: 'ARCHITECTURE.md',
    contents: `${text.slice(0, begin + BEGIN.length)}\n${layerDiagram(table)}\n${text.slice(end)}`,
  };
}
