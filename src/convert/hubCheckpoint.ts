/**
 * Download Model… → Repoformer (converted on this machine): fetches a GPTBigCode checkpoint and StarCoder's
 * tokenizer files from a Hugging Face hub (or a mirror with the same URL layout), converts them to GGUF and loads
 * the result once to validate it. File lists, sizes and sha256 come from the hub's tree API
 * (GET {base}/api/models/{repo}/tree/{revision}; LFS files carry lfs.oid = sha256); each file goes through the
 * project's downloader (resumable, checked, never a half file under the final name).
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { DEFAULTS } from '../defaults';
import { CodeModel } from '../model/codeModel';
import { DownloadError, downloadModel, sha256File, type DownloadProgress } from '../model/download';
import { convertCheckpoint, type OutputType } from './convert';

/** The only Repoformer repository with tokenizer files (StarCoder's); it is not gated. */
export const DEFAULT_TOKENIZER_REPO = 'xiaowu0162/repoformer-16b';

export interface RepoformerSize {
  id: string;
  label: string;
  repo: string;
  /** Parameters, for the disk and memory figures shown before downloading. */
  parameters: number;
}

/** Parameter counts from the checkpoints' sizes (fp32, 4 bytes each): 1b 4.55 GB; 3b and 7B as StarCoderBase's. */
export const REPOFORMER_SIZES: readonly RepoformerSize[] = [
  { id: 'repoformer-1b', label: 'Repoformer 1B', repo: 'xiaowu0162/repoformer-1b', parameters: 1.14e9 },
  { id: 'repoformer-3b', label: 'Repoformer 3B', repo: 'xiaowu0162/repoformer-3b', parameters: 3.04e9 },
  { id: 'repoformer-7b', label: 'Repoformer 7B', repo: 'xiaowu0162/repoformer-7B', parameters: 7.33e9 },
];

interface TreeEntry {
  type: string;
  path: string;
  size: number;
  lfs?: { oid: string; size: number };
}

export interface HubFile {
  repo: string;
  path: string;
  size: number;
  sha256?: string;
}

export interface FetchCheckpointOptions {
  hubBaseUrl?: string;
  repo: string;
  tokenizerRepo?: string;
  revision?: string;
  /** Where the checkpoint files go (a folder of their own, deletable after conversion). */
  directory: string;
  /** The GGUF to write. */
  out: string;
  type?: OutputType;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  onStage?(stage: 'download' | 'convert' | 'validate', detail: string): void;
  onDownloadProgress?(p: DownloadProgress & { file: string }): void;
  onConvertProgress?(p: { tensor: string; doneBytes: number; totalBytes: number }): void;
  /**
   * Loads the converted model once and throws if it does not work; default: load it in this process. The
   * extension passes one that loads it in its engine process instead, where models run.
   */
  validate?(modelPath: string): Promise<void>;
}

export interface FetchCheckpointResult {
  modelPath: string;
  sourceDirectory: string;
  sourceBytes: number;
}

/** Output bytes per parameter: Q8_0 stores 34 bytes per 32 weights; f16 2. */
const OUTPUT_BYTES_PER_PARAMETER: Readonly<Record<OutputType, number>> = { q8_0: 34 / 32, f16: 2 };
/** Free space kept beyond the estimate, for the header, the position table and the filesystem's own needs. */
const DISK_MARGIN_BYTES = 200e6;
/** Tokens of context for the validating load: enough to run, small enough to cost nothing. */
const VALIDATION_CONTEXT = 256;

const WEIGHT_LAYOUTS = [
  { index: 'model.safetensors.index.json', single: 'model.safetensors', shard: /^model-\d+-of-\d+\.safetensors$/ },
  { index: 'pytorch_model.bin.index.json', single: 'pytorch_model.bin', shard: /^pytorch_model-\d+-of-\d+\.bin$/ },
];
const TOKENIZER_FILES = ['tokenizer.json', 'added_tokens.json'];

export function hubUrl(base: string, repo: string, revision: string, file: string): string {
  return `${base.replace(/\/+$/, '')}/${repo}/resolve/${encodeURIComponent(revision)}/${file}`;
}

async function listRepo(
  base: string,
  repo: string,
  revision: string,
  options: FetchCheckpointOptions,
): Promise<TreeEntry[]> {
  const url = `${base.replace(/\/+$/, '')}/api/models/${repo}/tree/${encodeURIComponent(revision)}`;
  let response: Response;
  try {
    response = await fetch(url, { headers: options.headers, signal: options.signal });
  } catch (error) {
    if (options.signal?.aborted) throw new DownloadError('cancelled', 'The download was cancelled.', 'Download again.');
    throw new DownloadError(
      'network',
      `Could not list ${repo}: ${(error as Error).message}`,
      'Check the internet connection, or the "repogate.hubBaseUrl" setting for a mirror.',
      { cause: error },
    );
  }
  if (!response.ok) {
    throw new DownloadError(
      'network',
      `Listing ${repo} failed: HTTP ${response.status} from ${url}.`,
      response.status === 401 || response.status === 403
        ? 'The hub refused access; a gated repository needs an access token in HF_TOKEN.'
        : 'Check the repository name and the "repogate.hubBaseUrl" setting (a mirror must serve the hub API).',
    );
  }
  return (await response.json()) as TreeEntry[];
}

const toHubFile = (repo: string, e: TreeEntry): HubFile => ({
  repo,
  path: e.path,
  size: e.lfs?.size ?? e.size,
  sha256: e.lfs?.oid,
});

/** config.json and the weights of one layout (safetensors first), then the tokenizer files the tokenizer repo has. */
export function chooseFiles(
  repo: string,
  weights: TreeEntry[],
  tokenizerRepo: string,
  tokenizer: TreeEntry[],
): HubFile[] {
  const byPath = new Map(weights.filter((e) => e.type === 'file').map((e) => [e.path, e]));
  const config = byPath.get('config.json');
  if (!config) throw new DownloadError('network', `${repo} has no config.json.`, 'Check the repository name.');
  for (const layout of WEIGHT_LAYOUTS) {
    const index = byPath.get(layout.index);
    const single = byPath.get(layout.single);
    if (!index && !single) continue;
    const files = index ? [index, ...[...byPath.values()].filter((e) => layout.shard.test(e.path))] : [single!];
    const tokenizerFiles = tokenizer.filter((e) => e.type === 'file' && TOKENIZER_FILES.includes(e.path));
    if (!tokenizerFiles.some((e) => e.path === 'tokenizer.json')) {
      throw new DownloadError(
        'network',
        `${tokenizerRepo} has no tokenizer.json.`,
        "Choose a repository with StarCoder's tokenizer.",
      );
    }
    return [config, ...files]
      .map((e) => toHubFile(repo, e))
      .concat(tokenizerFiles.map((e) => toHubFile(tokenizerRepo, e)));
  }
  throw new DownloadError(
    'network',
    `${repo} has no pytorch_model.bin or model.safetensors weights.`,
    'Check the repository name.',
  );
}

async function freeBytes(directory: string): Promise<number> {
  const s = await fs.statfs(directory);
  return s.bavail * s.bsize;
}

async function sizeOf(file: string): Promise<number> {
  return fs.stat(file).then(
    (s) => s.size,
    () => 0,
  );
}

/** Downloads (resuming what is there), converts, validates; the caller may then delete sourceDirectory. */
export async function fetchAndConvert(options: FetchCheckpointOptions): Promise<FetchCheckpointResult> {
  const base = options.hubBaseUrl || DEFAULTS.hubBaseUrl;
  const revision = options.revision ?? 'main';
  const tokenizerRepo = options.tokenizerRepo ?? DEFAULT_TOKENIZER_REPO;
  const type = options.type ?? 'q8_0';
  await fs.mkdir(options.directory, { recursive: true });
  await fs.mkdir(path.dirname(path.resolve(options.out)), { recursive: true });
  const files = chooseFiles(
    options.repo,
    await listRepo(base, options.repo, revision, options),
    tokenizerRepo,
    await listRepo(base, tokenizerRepo, revision, options),
  );

  const sourceBytes = files.reduce((a, f) => a + f.size, 0);
  let toFetch = 0;
  for (const f of files)
    if ((await sizeOf(path.join(options.directory, path.basename(f.path)))) !== f.size) toFetch += f.size;
  const weightBytes = files.filter((f) => /\.(bin|safetensors)$/.test(f.path)).reduce((a, f) => a + f.size, 0);
  // fp32 checkpoints: 4 bytes per parameter.
  const outputBytes = (weightBytes / 4) * OUTPUT_BYTES_PER_PARAMETER[type];
  const needed = toFetch + outputBytes + DISK_MARGIN_BYTES;
  const free = await freeBytes(options.directory);
  if (free < needed) {
    throw new DownloadError(
      'disk',
      `Not enough disk space: ${gb(needed)} needed (download ${gb(toFetch)}, model ` +
        `${gb(outputBytes)}), ${gb(free)} free in ${options.directory}.`,
      'Free some disk space or choose a smaller model, then try again; what was downloaded so far is kept.',
    );
  }

  for (const f of files) {
    const fileName = path.basename(f.path);
    const local = path.join(options.directory, fileName);
    // Fetched by an earlier attempt (the conversion failed or was cancelled): keep it if it is still right.
    if ((await sizeOf(local)) === f.size && (!f.sha256 || (await sha256File(local, options.signal)) === f.sha256))
      continue;
    options.onStage?.('download', fileName);
    await downloadModel({
      url: hubUrl(base, f.repo, revision, f.path),
      directory: options.directory,
      fileName,
      sha256: f.sha256,
      gguf: false,
      headers: options.headers,
      signal: options.signal,
      onProgress: (p) => options.onDownloadProgress?.({ ...p, file: fileName }),
    });
  }

  options.onStage?.('convert', options.out);
  await convertCheckpoint({
    dir: options.directory,
    out: options.out,
    type,
    name: path.basename(options.repo),
    signal: options.signal,
    onProgress: options.onConvertProgress,
  });

  options.onStage?.('validate', options.out);
  try {
    await (options.validate ?? validateByLoading)(options.out);
  } catch (error) {
    await fs.rm(options.out, { force: true });
    throw new DownloadError(
      'not-gguf',
      `The converted model did not load: ${(error as Error).message}`,
      'Delete the downloaded files and try again; if it fails again, report it with the log.',
      { cause: error },
    );
  }
  return { modelPath: options.out, sourceDirectory: options.directory, sourceBytes };
}

/** Loads the model once in this process (CPU, a small context) and requires the <cc> gate. */
async function validateByLoading(modelPath: string): Promise<void> {
  const model = await CodeModel.load({ modelPath, threads: 1, gpuLayers: 0, contextSize: VALIDATION_CONTEXT });
  const ok = model.info.family.hasGate;
  await model.dispose();
  if (!ok) throw new Error('the converted model has no <cc> gate token');
}

const gb = (bytes: number): string => `${(bytes / 1e9).toFixed(2)} GB`;
