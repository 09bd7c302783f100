/**
 * The source tree's structure (docs/architecture.md, "Layers"): no import circle, no import against the layer table,
 * `vscode` only in the editor glue, no function over 100 lines but the listed exceptions. Each check is also run on
 * a made-up violation, so that it is seen to fail.
 */
import { strict as assert } from 'assert';
import * as path from 'path';
import {
  importCircles,
  layerViolations,
  LONG_FUNCTION_EXCEPTIONS,
  longFunctions,
  readSourceTree,
  unexpectedLongFunctions,
} from '../helpers/sourceStructure';

const SRC = path.resolve(__dirname, '../../../src');

describe('source structure', () => {
  const files = readSourceTree(SRC);

  it('reads the whole tree', () => {
    assert.ok(
      files.has('retrieval/retrieve.ts') && files.has('defaults.ts') && files.size > 100,
      `${files.size} files`,
    );
  });

  it('has no import circle', () => {
    assert.deepEqual(importCircles(files), []);
  });

  it('imports only downward by the layer table, and vscode only in the editor glue', () => {
    assert.deepEqual(layerViolations(files), []);
  });

  it('has no function over 100 lines but the listed exceptions', () => {
    const long = unexpectedLongFunctions(files).map((f) => `src/${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
    assert.deepEqual(long, []);
    for (const e of LONG_FUNCTION_EXCEPTIONS) {
      assert.ok(
        longFunctions(files).some((f) => f.file === e.file && f.name === e.name),
        `${e.file} ${e.name} is listed but no longer long`,
      );
    }
  });

  describe('finds made-up violations', () => {
    it('a circle of two files, type-only imports included, and a file importing itself', () => {
      const made = new Map([
        ['model/a.ts', "import type { B } from './b';\nexport interface A { b: B }\n"],
        ['model/b.ts', "import type { A } from './a';\nexport interface B { a: A }\n"],
        ['model/c.ts', "export { x } from './c';\nexport const y = 1;\n"],
        ['model/d.ts', "import { A } from './a';\nexport const d: A | undefined = undefined;\n"],
      ]);
      assert.deepEqual(importCircles(made), [['model/a.ts', 'model/b.ts'], ['model/c.ts']]);
    });

    it('an upward import, a folder the table lacks, and vscode below src/vscode', () => {
      const made = new Map([
        ['index/low.ts', "import { run } from '../engine/high';\nexport const low = run;\n"],
        ['engine/high.ts', "import * as vscode from 'vscode';\nexport const run = vscode;\n"],
        ['engine/ok.ts', "import { low } from '../index/low';\nexport const ok = low;\n"],
        ['stray/file.ts', 'export const stray = 1;\n'],
      ]);
      assert.deepEqual(layerViolations(made), [
        'src/stray/file.ts: its folder is not in the layer table',
        'src/index/low.ts:1 imports src/engine/high.ts: index may not import engine',
        'src/engine/high.ts:1 imports vscode below src/vscode',
      ]);
    });

    it('a function of 101 lines, and not one of 100', () => {
      const body = (n: number): string => Array.from({ length: n - 2 }, (_, i) => `  const v${i} = ${i};`).join('\n');
      const made = new Map([
        [
          'index/long.ts',
          `export function long(): void {\n${body(101)}\n}\nconst short = (): void => {\n${body(100)}\n};\n`,
        ],
      ]);
      assert.deepEqual(
        longFunctions(made).map((f) => [f.name, f.lines]),
        [['long', 101]],
      );
    });
  });
});
