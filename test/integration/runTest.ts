/**
 * Runs the integration suite (suite/*.test.ts) inside a real VS Code desktop build with @vscode/test-electron:
 * the extension under development from the repository root (dist/ built by esbuild), a temporary copy of
 * test/fixtures/repos/shop as the workspace (with REPOGATE_IT_WORKSPACE=multiroot: of test/fixtures/repos/multiroot,
 * opened as its two-folder .code-workspace), a fresh user-data folder whose settings point repogate.modelPath
 * at the bundled tiny model and turn workspace trust off.
 *
 * VS Code comes from VSCODE_EXECUTABLE, or else test-electron downloads one (a connected machine). When that
 * download fails because the network is unreachable and VSCODE_EXECUTABLE is unset, the run is reported as
 * skipped and exits 0; every other failure exits non-zero. The last line printed is either
 * "N passed, N failed" or "integration: skipped (no VS Code build)".
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import {
  downloadAndUnzipVSCode,
  ProgressReportStage,
  runTests,
  type ProgressReport,
  type ProgressReporter,
} from '@vscode/test-electron';

export const root = path.resolve(__dirname, '..', '..', '..');
/**
 * The workspaces a run can open: a folder, or a multi-root workspace file within the fixture. The multi-root one
 * runs only its own suite (suite/index.ts).
 */
const WORKSPACES: Record<string, { fixture: string; open: string }> = {
  shop: { fixture: 'shop', open: '' },
  multiroot: { fixture: 'multiroot', open: 'multiroot.code-workspace' },
};
const workspaceName = process.env.REPOGATE_IT_WORKSPACE ?? 'shop';
const fixtureOf = (name: string): string => path.join(root, 'test', 'fixtures', 'repos', name);
const model = path.join(root, 'test', 'fixtures', 'models', 'repogate-tiny.gguf');
export const suite = path.join(__dirname, 'suite', 'index.js');
/** The extension under test: this repository, or another build of it (e.g. a deliberately broken copy). */
export const extensionPath = process.env.REPOGATE_IT_EXTENSION ? path.resolve(process.env.REPOGATE_IT_EXTENSION) : root;
const SKIP_LINE = 'integration: skipped (no VS Code build)';

/** Error codes that mean "this machine cannot reach the download server", not "the download broke". */
const UNREACHABLE = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'ENETDOWN',
]);

class NoVSCodeBuild extends Error {}

export interface SuiteResult {
  passed: number;
  failed: number;
  pending: number;
  tests: { title: string; state: string; durationMs?: number; error?: string; notes?: string[] }[];
}

/** The user settings of the run: the tiny model, no trust prompt, nothing else that could write ghost text or go online. */
export function userSettings(modelPath: string): Record<string, unknown> {
  return {
    'repogate.modelPath': modelPath,
    'repogate.threads': 1,
    'repogate.gpuLayers': 0,
    'security.workspace.trust.enabled': false,
    'chat.disableAIFeatures': true,
    'editor.inlineSuggest.enabled': true,
    // Edited buffers are never saved by the editor: the suites check that the workspace stays as it was copied.
    'files.autoSave': 'off',
    'workbench.startupEditor': 'none',
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.enableExperiments': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'git.enabled': false,
  };
}

function isUnreachable(error: unknown): boolean {
  const e = error as { code?: unknown; name?: unknown } | undefined;
  return (
    !!e &&
    typeof e === 'object' &&
    ((typeof e.code === 'string' && UNREACHABLE.has(e.code)) || e.name === 'TimeoutError')
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** VSCODE_EXECUTABLE, or a build test-electron downloads (or finds in its cache). */
async function vscodeExecutable(): Promise<string> {
  const given = process.env.VSCODE_EXECUTABLE;
  if (given) {
    if (!existsSync(given) || !statSync(given).isFile()) throw new Error(`VSCODE_EXECUTABLE=${given} is not a file`);
    return given;
  }
  const cachePath = process.env.VSCODE_TEST_CACHE ?? path.join(root, 'test', 'integration', '.vscode-test');
  console.log(
    `integration: VSCODE_EXECUTABLE is not set; asking @vscode/test-electron for a VS Code build (cache ${cachePath})`,
  );
  // The download retries and then throws a generic "Failed to download"; the reporter sees the causes.
  const causes: unknown[] = [];
  let shownPercent = -10;
  const reporter: ProgressReporter = {
    report(report: ProgressReport) {
      switch (report.stage) {
        case ProgressReportStage.ResolvedVersion:
          console.log(`integration: VS Code ${report.version}`);
          break;
        case ProgressReportStage.Downloading: {
          const percent = report.totalBytes ? Math.floor((report.bytesSoFar / report.totalBytes) * 100) : 0;
          if (percent >= shownPercent + 10) {
            shownPercent = percent;
            console.log(`integration: downloading ${report.url}: ${percent}%`);
          }
          break;
        }
        case ProgressReportStage.Retrying:
          causes.push(report.error);
          console.log(
            `integration: download attempt ${report.attempt} of ${report.totalAttempts} failed: ${messageOf(report.error)}`,
          );
          break;
        case ProgressReportStage.FoundMatchingInstall:
        case ProgressReportStage.NewInstallComplete:
          console.log(`integration: VS Code in ${report.downloadedPath}`);
          break;
        default:
          break;
      }
    },
    error(error: unknown) {
      causes.push(error);
    },
  };
  try {
    return await downloadAndUnzipVSCode({ cachePath, extensionDevelopmentPath: extensionPath, reporter });
  } catch (error) {
    const all = [error, ...causes];
    if (all.some(isUnreachable)) {
      throw new NoVSCodeBuild(
        `no VS Code build: set VSCODE_EXECUTABLE or run on a connected machine (download failed: ${all.map(messageOf).join('; ')})`,
      );
    }
    throw new Error(`downloading VS Code failed: ${all.map(messageOf).join('; ')}`);
  }
}

export interface RunFolders {
  /** Everything below; removed after a run that passed, kept (and printed) otherwise. */
  tmp: string;
  /** A copy of the fixture (test/fixtures/repos/shop), or the workspace file in it, opened as the workspace. */
  workspace: string;
  userData: string;
  extensions: string;
  /** Where suite/index.ts writes its outcome ($REPOGATE_IT_RESULT). */
  resultFile: string;
}

/** Checks the build, copies the fixture workspace and writes the user settings into a fresh temporary folder. */
export function prepareRun(): RunFolders {
  const chosen = WORKSPACES[workspaceName];
  if (!chosen) throw new Error(`REPOGATE_IT_WORKSPACE is ${workspaceName}, not one of ${Object.keys(WORKSPACES)}`);
  for (const [file, what] of [
    [path.join(extensionPath, 'dist', 'extension.js'), 'the extension bundle (node esbuild.mjs)'],
    [suite, 'the compiled suite (tsc -p .)'],
    [model, 'the tiny model fixture'],
  ]) {
    if (!existsSync(file)) throw new Error(`missing ${what}: ${file}`);
  }
  const tmp = mkdtempSync(path.join(tmpdir(), 'repogate-it-'));
  const folders: RunFolders = {
    tmp,
    workspace: path.join(tmp, chosen.fixture, chosen.open),
    userData: path.join(tmp, 'user-data'),
    extensions: path.join(tmp, 'extensions'),
    resultFile: path.join(tmp, 'result.json'),
  };
  cpSync(fixtureOf(chosen.fixture), path.join(tmp, chosen.fixture), { recursive: true });
  mkdirSync(folders.extensions, { recursive: true });
  const settings = JSON.stringify(userSettings(model), null, 2);
  // A desktop window reads machine-scoped settings (repogate.modelPath) from the user settings; a remote or
  // code-server window reads them only from the server's Machine settings.
  for (const scope of ['User', 'Machine']) {
    mkdirSync(path.join(folders.userData, scope), { recursive: true });
    writeFileSync(path.join(folders.userData, scope, 'settings.json'), settings);
  }
  return folders;
}

/** The environment the suite runs with (extension host). */
export function suiteEnv(folders: RunFolders): Record<string, string> {
  return {
    REPOGATE_IT_RESULT: folders.resultFile,
    REPOGATE_IT_MODEL: model,
    REPOGATE_IT_FIXTURE: fixtureOf(WORKSPACES[workspaceName].fixture),
    REPOGATE_IT_USER_DATA: folders.userData,
    REPOGATE_IT_WORKSPACE: workspaceName,
    // The multi-root suite reads the index's size (activate.ts's TestHooks) to see folders added and dropped.
    ...(workspaceName === 'multiroot' && { REPOGATE_TEST_HOOKS: '1' }),
  };
}

/**
 * Prints one line per test and the final "N passed, N failed"; returns the exit code. `problem` is what went
 * wrong around the tests (VS Code exited non-zero, a timeout), if anything.
 */
export function report(folders: RunFolders, problem?: unknown): number {
  let result: SuiteResult | undefined;
  try {
    result = JSON.parse(readFileSync(folders.resultFile, 'utf8')) as SuiteResult;
  } catch {
    result = undefined;
  }
  if (!result) {
    console.error(
      `integration: the suite wrote no result (${problem ? messageOf(problem) : 'VS Code exited without running it'}); files kept in ${folders.tmp}`,
    );
    console.log('0 passed, 1 failed');
    return 1;
  }
  for (const t of result.tests) {
    const mark = t.state === 'passed' ? 'ok  ' : t.state === 'failed' ? 'FAIL' : 'skip';
    console.log(
      `  ${mark} ${t.title}${t.durationMs === undefined ? '' : ` (${t.durationMs} ms)`}${t.error ? `\n       ${t.error.split('\n').join('\n       ')}` : ''}`,
    );
    for (const line of t.notes ?? []) console.log(`       ${line}`);
  }
  const ok = !problem && result.failed === 0 && result.passed > 0;
  if (problem) console.error(`integration: ${messageOf(problem)}`);
  if (ok) rmSync(folders.tmp, { recursive: true, force: true });
  else console.error(`integration: files kept in ${folders.tmp}`);
  // A run that failed outside any test (VS Code crashed, nothing passed) still counts as one failure.
  console.log(`${result.passed} passed, ${result.failed || (ok ? 0 : 1)} failed`);
  return ok ? 0 : 1;
}

async function main(): Promise<number> {
  const executable = await vscodeExecutable();
  const folders = prepareRun();
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    console.log('integration: DISPLAY is not set; on a headless Linux machine run this under `xvfb-run -a`');
  }
  console.log(`integration: ${executable}\nintegration: workspace ${folders.workspace}, user data ${folders.userData}`);
  let problem: unknown;
  try {
    await runTests({
      vscodeExecutablePath: executable,
      extensionDevelopmentPath: extensionPath,
      extensionTestsPath: suite,
      extensionTestsEnv: suiteEnv(folders),
      launchArgs: [
        folders.workspace,
        '--disable-extensions',
        '--user-data-dir',
        folders.userData,
        '--extensions-dir',
        folders.extensions,
      ],
    });
  } catch (error) {
    problem = error;
  }
  return report(folders, problem);
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof NoVSCodeBuild && !process.env.VSCODE_EXECUTABLE) {
        console.log(error.message);
        console.log(SKIP_LINE);
        process.exit(0);
      }
      console.error(`integration: ${messageOf(error)}`);
      console.log('0 passed, 1 failed');
      process.exit(1);
    },
  );
}
