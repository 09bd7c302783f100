/**
 * The docs stay readable in ten minutes (issue 44): docs/ as a whole ≤ 120 KB, docs/benchmarks.md ≤ 25 KB, README.md
 * ≤ 10 KB, and every decision record ≤ 70 lines. A record is a section of docs/decisions*.md whose heading starts with
 * its ID (`### R12: …`, `## S4. …`), up to the next heading of its level or above; a decision file without such
 * headings (docs/decisions-memory.md) is one record. Record IDs are unique, and every ID the code cites as a decision
 * ("decision S5", "decisions R10, R12", "docs/decisions-retrieval.md, R10") is a record of the docs.
 */
import { strict as assert } from 'assert';
import { readdirSync, readFileSync, statSync } from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '../../..');

export const LIMITS = { docsBytes: 120_000, benchmarksBytes: 25_000, readmeBytes: 10_000, recordLines: 70 };

export interface DecisionRecord {
  doc: string;
  id: string;
  lines: number;
}

const RECORD_HEADING = /^(#{1,4}) ([A-Z]\d+[a-z]?)[:.]\s/;

/** The records of one decision file; the whole file is one record (id '') when no heading carries an ID. */
export function decisionRecords(doc: string, text: string): DecisionRecord[] {
  const lines = text.split('\n');
  const starts: Array<{ at: number; level: number; id: string }> = [];
  lines.forEach((line, at) => {
    const m = RECORD_HEADING.exec(line);
    if (m) starts.push({ at, level: m[1].length, id: m[2] });
  });
  const length = (from: number, to: number): number => {
    while (to > from && lines[to - 1].trim() === '') to--;
    return to - from;
  };
  if (starts.length === 0) return [{ doc, id: '', lines: length(0, lines.length) }];
  return starts.map(({ at, level, id }) => {
    let end = at + 1;
    while (end < lines.length && !(/^#{1,6} /.test(lines[end]) && /^#+/.exec(lines[end])![0].length <= level)) end++;
    return { doc, id, lines: length(at, end) };
  });
}

/** The decision IDs a source or doc text cites: IDs within 40 characters after the word "decision(s)". */
export function citedDecisions(text: string): string[] {
  const cited: string[] = [];
  for (const m of text.matchAll(/\bdecisions?\b(?=([^\n]{0,40}))/g))
    for (const id of m[1].matchAll(/\b([A-Z]\d+[a-z]?)\b/g)) cited.push(id[1]);
  return cited;
}

function filesUnder(dir: string, keep: (rel: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(ROOT, rel))) {
      const child = `${rel}/${name}`;
      if (['node_modules', 'fixtures', 'artifacts'].includes(name)) continue;
      if (statSync(path.join(ROOT, child)).isDirectory()) walk(child);
      else if (keep(child)) found.push(child);
    }
  };
  walk(dir);
  return found;
}

describe('docs size', () => {
  const docs = readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`);
  const bytes = (rel: string): number => statSync(path.join(ROOT, rel)).size;
  const decisionDocs = docs.filter((d) => /^docs\/decisions[^/]*\.md$/.test(d));
  const records = decisionDocs.flatMap((d) => decisionRecords(d, readFileSync(path.join(ROOT, d), 'utf8')));

  it(`keeps docs/ within ${LIMITS.docsBytes} bytes, pictures included`, () => {
    const files = filesUnder('docs', () => true);
    const total = files.reduce((sum, d) => sum + bytes(d), 0);
    assert.ok(total <= LIMITS.docsBytes, `docs/ is ${total} bytes: ${files.map((d) => `${d} ${bytes(d)}`).join(', ')}`);
  });

  it(`keeps docs/benchmarks.md within ${LIMITS.benchmarksBytes} and README.md within ${LIMITS.readmeBytes} bytes`, () => {
    assert.ok(bytes('docs/benchmarks.md') <= LIMITS.benchmarksBytes, `benchmarks.md: ${bytes('docs/benchmarks.md')}`);
    assert.ok(bytes('README.md') <= LIMITS.readmeBytes, `README.md: ${bytes('README.md')}`);
  });

  it(`keeps every decision record within ${LIMITS.recordLines} lines`, () => {
    assert.ok(records.length > 80, `${records.length} records found`);
    const long = records.filter((r) => r.lines > LIMITS.recordLines).map((r) => `${r.doc} ${r.id}: ${r.lines} lines`);
    assert.deepEqual(long, []);
  });

  it('gives every record its own ID, and every ID the code cites is a record', () => {
    const ids = records.filter((r) => r.id).map((r) => r.id);
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
    );
    const sources = [
      ...filesUnder('src', (f) => f.endsWith('.ts')),
      ...filesUnder('test', (f) => /\.(ts|mjs|md)$/.test(f)),
      ...filesUnder('tools', (f) => /\.(ts|mjs|md|sh)$/.test(f)),
    ];
    const missing = sources.flatMap((f) =>
      citedDecisions(readFileSync(path.join(ROOT, f), 'utf8'))
        .filter((id) => !ids.includes(id))
        .map((id) => `${f}: ${id}`),
    );
    assert.deepEqual(missing, []);
  });

  describe('on made-up docs', () => {
    const made = [
      '# Decisions',
      '',
      '### R1: one',
      'a',
      '',
      '### R2: two',
      'b',
      'c',
      '## S1. three',
      'd',
      '#### not a record',
      'e',
      '',
    ].join('\n');

    it('cuts records at the next heading of their level or above', () => {
      assert.deepEqual(
        decisionRecords('docs/decisions-x.md', made).map((r) => `${r.id} ${r.lines}`),
        ['R1 2', 'R2 3', 'S1 4'],
      );
      assert.deepEqual(
        decisionRecords('docs/decisions-y.md', '# Decision\n\n## Context\nx\n').map((r) => `${r.id} ${r.lines}`),
        [' 4'],
      );
    });

    it('finds the IDs cited as decisions, and no others', () => {
      const text = 'see decision S5; decisions R10, R12 (docs/decisions-retrieval.md, R10). Far past the window: R9.';
      assert.deepEqual([...new Set(citedDecisions(text))].sort(), ['R10', 'R12', 'S5']);
    });
  });
});
