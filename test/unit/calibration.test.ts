import * as assert from 'assert';
import { promises as fs } from 'fs';
import * as path from 'path';
import { makeTasks } from '../../src/bench/makeTasks';
import { RepoIndex } from '../../src/index/repoIndex';
import { buildIndex } from '../../src/index/workspace';
import {
  calibrate,
  calibrateProjects,
  calibrationSamples,
  chooseProfile,
  MARGIN,
  projectLineBudget,
  servingProfiles,
  type WorkspaceCalibration,
} from '../../src/retrieval/calibration';
import { describeCalibration } from '../../src/retrieval/calibrationReport';
import { IndexClient } from '../../src/retrieval/indexClient';
import { FUSED, PROFILES } from '../../src/retrieval/profiles';
import { tempDir, writeFiles } from '../helpers/fixtures';

/** A library of 40 functions and 30 features that call three of them each through a namespace import. */
async function libraryRepo(root: string): Promise<void> {
  const files: Record<string, string> = {};
  files['src/lib/api.ts'] = Array.from(
    { length: 40 },
    (_, i) =>
      `export function fetchRecord${i}(id: string, limit: number): Promise<string[]> {\n  return load(id, ${i});\n}\n`,
  ).join('\n');
  files['src/lib/load.ts'] =
    'export function load(id: string, n: number): Promise<string[]> {\n  return Promise.resolve([id]);\n}\n';
  for (let f = 0; f < 30; f++) {
    const calls = [0, 1, 2].map((k) => `  const r${k} = await api.fetchRecord${(f * 7 + k * 13) % 40}(id, ${k});`);
    files[`src/features/feature${f}.ts`] =
      `import * as api from '../lib/api';\n\nexport async function feature${f}(id: string) {\n${calls.join('\n')}\n  return [r0, r1, r2];\n}\n`;
  }
  await writeFiles(root, files);
}

/**
 * The library of 300 functions, 30 small features that call three each, and one large module that calls 200 of
 * them, a line each: 200 of the 290 cross-file lines are in one file.
 */
async function largeModuleRepo(root: string): Promise<void> {
  const files: Record<string, string> = {};
  files['src/lib/api.ts'] = Array.from(
    { length: 300 },
    (_, i) => `export function fetchRecord${i}(id: string): string {\n  return id + ${i};\n}\n`,
  ).join('\n');
  for (let f = 0; f < 30; f++) {
    const calls = [0, 1, 2].map((k) => `  const r${k} = api.fetchRecord${200 + ((f * 7 + k * 13) % 100)}(id);`);
    files[`src/features/feature${f}.ts`] =
      `import * as api from '../lib/api';\n\nexport function feature${f}(id: string) {\n${calls.join('\n')}\n  return [r0, r1, r2];\n}\n`;
  }
  const calls = Array.from({ length: 200 }, (_, i) => `  out.push(api.fetchRecord${i}(id));`);
  files['src/large.ts'] =
    `import * as api from '../lib/api';\n\nexport function all(id: string): string[] {\n  const out: string[] = [];\n${calls.join('\n')}\n  return out;\n}\n`;
  await writeFiles(root, files);
}

/** A repository written by `make` and indexed in a temporary folder, for `test`; removed afterwards. */
async function withLibraryIndex(
  test: (index: RepoIndex, read: (p: string) => Promise<string>) => Promise<void>,
  make: (root: string) => Promise<void> = libraryRepo,
): Promise<void> {
  const { dir, cleanup } = await tempDir();
  const index = new RepoIndex(dir);
  try {
    await make(dir);
    await buildIndex(index, { root: dir });
    await test(index, (p) => fs.readFile(path.join(dir, p), 'utf8'));
  } finally {
    index.dispose();
    await cleanup();
  }
}

describe('calibration', () => {
  it('samples the same lines every time, never an excluded one, each cut out of its file', async function () {
    this.timeout(60_000);
    await withLibraryIndex(async (index, read) => {
      const all = await calibrationSamples(index, read);
      const exclude = new Set(all.slice(0, 5).map((s) => `${s.path}:${s.cursor.line}`));
      const first = await calibrationSamples(index, read, { exclude });
      const again = await calibrationSamples(index, read, { exclude });
      assert.deepStrictEqual(again, first);
      assert.ok(first.length >= 30, `${first.length} samples`);
      for (const sample of first) {
        assert.ok(!exclude.has(`${sample.path}:${sample.cursor.line}`), `${sample.path}:${sample.cursor.line}`);
        const original = (await read(sample.path)).split('\n');
        const cut = sample.text.split('\n');
        assert.strictEqual(cut.length, original.length);
        assert.strictEqual(cut[sample.cursor.line], original[sample.cursor.line].slice(0, sample.cursor.character));
        for (const name of sample.novel) assert.ok(!new RegExp(`\\b${name}\\b`).test(sample.text), name);
      }
    });
  });

  it('samples the lines make-tasks makes cross tasks of, with the same novel identifiers', async function () {
    this.timeout(60_000);
    await withLibraryIndex(async (index, read) => {
      const tasks = await makeTasks(index, index.roots.folders[0].path, { perKind: 1000 });
      const cross = new Map(
        tasks
          .filter((t) => t.metadata.kind === 'cross')
          .map((t) => [`${t.metadata.file}:${t.metadata.groundtruth_start_lineno}`, t.metadata.novel_identifiers]),
      );
      const samples = await calibrationSamples(index, read);
      assert.ok(samples.length >= 30, `${samples.length} samples`);
      for (const sample of samples) {
        assert.deepStrictEqual(sample.novel, cross.get(`${sample.path}:${sample.cursor.line}`), sample.path);
      }
    });
  });

  it('reads every file of a repository within its line budget, and stops reading once the budget is spent', async function () {
    this.timeout(60_000);
    await withLibraryIndex(async (index, read) => {
      const lineCounts = new Map<string, number>();
      const recording = async (p: string): Promise<string> => {
        const text = await read(p);
        lineCounts.set(p, text.split('\n').length);
        return text;
      };
      await calibrationSamples(index, recording);
      assert.deepStrictEqual([...lineCounts.keys()].sort(), [...index.files.keys()].sort());

      lineCounts.clear();
      const budget = 60;
      const samples = await calibrationSamples(index, recording, { maxLinesRead: budget });
      const counts = [...lineCounts.values()];
      const beforeLast = counts.slice(0, -1).reduce((a, b) => a + b, 0);
      assert.ok(counts.length > 1 && counts.length < index.files.size, `${counts.length} files read`);
      assert.ok(beforeLast < budget && beforeLast + counts[counts.length - 1] >= budget, counts.join(','));
      for (const sample of samples) assert.ok(lineCounts.has(sample.path), sample.path);
    });
  });

  it("samples a large module's lines in proportion to them, as people type there", async function () {
    this.timeout(60_000);
    await withLibraryIndex(async (index, read) => {
      const samples = await calibrationSamples(index, read);
      assert.strictEqual(samples.length, 100);
      // 200 of the 290 cross-file lines: about 69 of 100 samples (a binomial standard deviation near 5).
      const large = samples.filter((s) => s.path === 'src/large.ts').length;
      assert.ok(large >= 55 && large <= 83, `src/large.ts gave ${large} of 100 samples, about 69 expected`);
    }, largeModuleRepo);
  });

  it('keeps the fusion on a tie or too few samples, and takes a retriever that covers clearly more', () => {
    const covered = (fused: number, lexical: number): Map<string, number> =>
      new Map([...PROFILES.map((p) => [p.name, 0] as const), ['fused', fused], ['lexical', lexical]]);
    assert.strictEqual(chooseProfile(covered(60, 60), 100), FUSED);
    assert.strictEqual(chooseProfile(covered(60, 60 + MARGIN * 100 - 1), 100), FUSED);
    assert.strictEqual(chooseProfile(covered(60, 60 + MARGIN * 100), 100).name, 'lexical');
    assert.strictEqual(chooseProfile(covered(5, 20), 20), FUSED);
  });

  it('chooses a profile that covers, on its samples, as much as the best retriever alone (within the margin)', async function () {
    this.timeout(60_000);
    await withLibraryIndex(async (index, read) => {
      const result = await calibrate(index, read, { budget: 2000 });
      assert.ok(result.samples >= 30);
      const best = Math.max(...Object.values(result.recall));
      assert.ok(best > 0, JSON.stringify(result.recall));
      assert.ok(result.recall[result.profile.name] >= best - MARGIN, JSON.stringify(result));
    });
  });

  it('runs in the index worker after a build, and retrieval goes on meanwhile', async function () {
    this.timeout(60_000);
    const { dir, cleanup } = await tempDir();
    const client = new IndexClient();
    try {
      await libraryRepo(dir);
      await client.build({ root: dir });
      const request = {
        path: 'src/features/feature3.ts',
        text: "import * as api from '../lib/api';\n",
        cursor: { line: 1, character: 0 },
      };
      const [calibration, retrieved] = await Promise.all([client.calibration(), client.retrieve(request)]);
      assert.strictEqual(calibration?.projects.length, 1, JSON.stringify(calibration));
      const [src] = calibration.projects;
      assert.ok(src.project === 'src' && src.samples >= 30, JSON.stringify(src));
      assert.ok(PROFILES.some((p) => p.name === src.profile.name));
      assert.ok(retrieved.snippets.length > 0);
    } finally {
      await client.dispose();
      await cleanup();
    }
  });

  it('calibrates a workspace of one project exactly as the whole repository: same samples, same choice', async function () {
    this.timeout(60_000);
    await withLibraryIndex(async (index, read) => {
      const reads: string[][] = [[], []];
      const recording = (i: number) => async (p: string) => (reads[i].push(p), read(p));
      const whole = await calibrate(index, recording(0), { budget: 2000, maxLinesRead: 120 });
      const projects = await calibrateProjects(index, recording(1), { budget: 2000, maxLinesRead: 120 });
      assert.deepStrictEqual(reads[1], reads[0]);
      assert.strictEqual(projects.projects.length, 1);
      const { project, ...calibration } = projects.projects[0];
      assert.strictEqual(project, 'src');
      assert.deepStrictEqual(calibration, { profile: whole.profile, samples: whole.samples, recall: whole.recall });

      const full = await calibrate(index, read, { budget: 2000 });
      const fullProjects = (await calibrateProjects(index, read, { budget: 2000 })).projects[0];
      assert.deepStrictEqual(fullProjects, {
        project: 'src',
        profile: full.profile,
        samples: full.samples,
        recall: full.recall,
      });
    });
  });

  it('draws samples per project, within one line budget for the workspace', async function () {
    this.timeout(60_000);
    const twoPackages = async (root: string): Promise<void> => {
      for (const name of ['a', 'b']) {
        await libraryRepo(path.join(root, 'packages', name));
        await writeFiles(root, { [`packages/${name}/package.json`]: `{"name":"${name}"}` });
      }
    };
    await withLibraryIndex(async (index, read) => {
      const lines = new Map<string, number>();
      const recording = async (p: string): Promise<string> => {
        const text = await read(p);
        lines.set(p, text.split('\n').length);
        return text;
      };
      const all = await calibrateProjects(index, recording, { budget: 2000 });
      assert.deepStrictEqual(all.projects.map((p) => p.project).sort(), ['packages/a', 'packages/b']);
      for (const p of all.projects) assert.ok(p.samples >= 30, JSON.stringify(p));

      lines.clear();
      const budget = 400;
      await calibrateProjects(index, recording, { budget: 2000, maxLinesRead: budget });
      const linesUnder = (prefix: string): number =>
        [...lines].filter(([p]) => p.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);
      assert.ok(linesUnder('packages/a/') > 0 && linesUnder('packages/b/') > 0, JSON.stringify([...lines]));
      const largest = Math.max(...lines.values());
      assert.ok(linesUnder('') < budget + largest, `${linesUnder('')} lines read`);
    }, twoPackages);
  });

  it("serves a request with its project's profile, the fusion where none was chosen", () => {
    const [lexical, similar] = ['lexical', 'similar'].map((name) => PROFILES.find((p) => p.name === name)!);
    const recall = Object.fromEntries(PROFILES.map((p) => [p.name, 0.5]));
    const calibrated: WorkspaceCalibration = {
      projects: [
        { project: 'packages/a', profile: lexical, samples: 100, recall: { ...recall, lexical: 0.7 } },
        { project: 'packages/b', profile: similar, samples: 100, recall: { ...recall, similar: 0.65 } },
        { project: 'tools', profile: FUSED, samples: 12, recall },
      ],
      roots: { dirs: ['packages/a', 'packages/b'], multiRoot: false },
      ms: 1234,
    };
    const profileOf = servingProfiles(calibrated);
    assert.strictEqual(profileOf('packages/a/src/x.ts'), lexical);
    assert.strictEqual(profileOf('packages/b/index.ts'), similar);
    assert.strictEqual(profileOf('tools/build.ts'), FUSED);
    assert.strictEqual(profileOf('docs/new.ts'), FUSED);
    assert.strictEqual(
      describeCalibration(calibrated),
      'retrieval calibrated on 212 lines of 3 projects in 1234 ms: packages/a: lexical alone (70%, fused 50%); ' +
        'packages/b: similar alone (65%, fused 50%); the other 1: all retrievers fused',
    );
  });

  it("shares the line budget by the projects' bytes, the last one taking what is left", () => {
    assert.strictEqual(projectLineBudget(100, 400, 1000), 250);
    assert.strictEqual(projectLineBudget(300, 300, 850), 850);
    assert.strictEqual(projectLineBudget(0, 0, 850), 850);
  });
});
