/**
 * Entry point that VS Code's extension host calls with --extensionTestsPath: runs every suite/*.test.js with a
 * programmatic Mocha and writes the outcome as JSON to $REPOGATE_IT_RESULT for the runner, which prints the
 * counts. Rejects when any test fails, so VS Code exits non-zero as well.
 */
import { readdirSync, writeFileSync } from 'fs';
import Mocha from 'mocha';
import * as path from 'path';
import { takeNotes } from './helpers';

interface TestOutcome {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs?: number;
  error?: string;
  notes?: string[];
}

/** The suite of the multi-root workspace, which assumes its folders as the others assume the shop. */
const MULTI_ROOT_SUITE = 'multiRoot.test.js';

export function run(): Promise<void> {
  // REPOGATE_IT_GREP runs only the tests whose full titles match (e.g. "recovers from faults").
  const grep = process.env.REPOGATE_IT_GREP;
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 180_000, reporter: 'spec', ...(grep ? { grep } : {}) });
  // The multi-root workspace (REPOGATE_IT_WORKSPACE=multiroot, ../runTest.ts) runs its own suite; the shop the others.
  const multiRoot = process.env.REPOGATE_IT_WORKSPACE === 'multiroot';
  const files = readdirSync(__dirname)
    .filter((name) => name.endsWith('.test.js') && (name === MULTI_ROOT_SUITE) === multiRoot)
    .sort();
  for (const name of files) mocha.addFile(path.join(__dirname, name));
  const outcomes: TestOutcome[] = [];
  const write = (): void => {
    const file = process.env.REPOGATE_IT_RESULT;
    if (!file) return;
    const count = (state: TestOutcome['state']): number => outcomes.filter((o) => o.state === state).length;
    writeFileSync(
      file,
      JSON.stringify(
        { passed: count('passed'), failed: count('failed'), pending: count('pending'), tests: outcomes },
        null,
        2,
      ),
    );
  };
  return new Promise((resolve, reject) => {
    if (!files.length) {
      reject(new Error(`no *.test.js files in ${__dirname}`));
      return;
    }
    const runner = mocha.run((failures) => {
      write();
      if (failures > 0) reject(new Error(`${failures} integration test${failures === 1 ? '' : 's'} failed`));
      else resolve();
    });
    runner.on('pass', (test) =>
      outcomes.push({ title: test.fullTitle(), state: 'passed', durationMs: test.duration, notes: takeNotes() }),
    );
    runner.on('fail', (test, error: Error) =>
      outcomes.push({
        title: test.fullTitle(),
        state: 'failed',
        error: error.stack ?? error.message,
        notes: takeNotes(),
      }),
    );
    runner.on('pending', (test) => outcomes.push({ title: test.fullTitle(), state: 'pending' }));
  });
}
