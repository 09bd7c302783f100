/**
 * Model download for "RepoGate: Download Model…": plain Node, no `vscode`, so the command, the CLI and the tests
 * share it. The transfer itself is node-llama-cpp's downloader (ipull underneath: parallel ranged requests,
 * retries, resumable partial files); this module adds what it lacks — a name that only ever holds a finished,
 * checked model, GGUF and checksum verification, a steady speed/ETA, cancellation that keeps the partial file,
 * and errors a UI can act on.
 */
import { createHash } from 'crypto';
import { createReadStream, promises as fs } from 'fs';
import * as path from 'path';
import { pipeline } from 'stream/promises';
import type { ModelDownloader } from 'node-llama-cpp';
import { importNodeLlamaCpp } from './nodeLlamaCpp';
import { GGUF_MAGIC } from './gguf';

export interface RecommendedModel {
  id: string;
  label: string;
  url: string;
  fileName: string;
  sizeBytes: number;
  sha256?: string;
  note: string;
}

/**
 * Base (not instruct) code models trained with fill-in-the-middle, smallest useful first. Names, repositories and
 * sizes were checked against the Hugging Face file listings (tree pages of the commits pinned in each URL, read
 * through the docs search corpus); `sizeBytes` is that listing's figure (three significant digits, decimal units),
 * good for "about 1.65 GB" and a disk-space check, while the exact length comes from the server. The ggml-org
 * Qwen repositories are the ones llama.cpp recommends for FIM in its llama.vim / llama.vscode collection. URLs pin
 * a commit so the bytes cannot change under a recorded checksum. The only sha256 given is the one shown on the
 * file's Hugging Face page at that commit (Git LFS details); the others were not found and are left out.
 */
export const RECOMMENDED_MODELS: readonly RecommendedModel[] = [
  {
    id: 'qwen2.5-coder-1.5b-q8_0',
    label: 'Qwen2.5-Coder 1.5B (Q8_0)',
    url: 'https://huggingface.co/ggml-org/Qwen2.5-Coder-1.5B-Q8_0-GGUF/resolve/8be1b8a895a84beea772817caaa71eba6b6e0d07/qwen2.5-coder-1.5b-q8_0.gguf',
    fileName: 'qwen2.5-coder-1.5b-q8_0.gguf',
    sizeBytes: 1_650_000_000,
    note: 'Recommended. Good FIM quality at laptop speed; Apache-2.0.',
  },
  {
    id: 'qwen2.5-coder-0.5b-q8_0',
    label: 'Qwen2.5-Coder 0.5B (Q8_0)',
    url: 'https://huggingface.co/ggml-org/Qwen2.5-Coder-0.5B-Q8_0-GGUF/resolve/ecdd60b1c25ab158bec6e1ab084aeebf9eae0af4/qwen2.5-coder-0.5b-q8_0.gguf',
    fileName: 'qwen2.5-coder-0.5b-q8_0.gguf',
    sizeBytes: 531_000_000,
    sha256: 'd0f8cd6c49bab52a0abdbe47948518b1f4d9b1a8a2a6825099cea31cea10ac56',
    note: 'Fastest; for slow CPUs or little memory. Weaker completions. Apache-2.0.',
  },
  {
    id: 'qwen2.5-coder-1.5b-q4_k_m',
    label: 'Qwen2.5-Coder 1.5B (Q4_K_M, community quant)',
    url: 'https://huggingface.co/mradermacher/Qwen2.5-Coder-1.5B-GGUF/resolve/d3f7e01f1070fe8d4d95ba120e9c1fd2d1373410/Qwen2.5-Coder-1.5B.Q4_K_M.gguf',
    fileName: 'Qwen2.5-Coder-1.5B.Q4_K_M.gguf',
    sizeBytes: 986_000_000,
    note: 'The 1.5B model at 4 bits: less memory, slightly lower quality. Quantized by mradermacher. Apache-2.0.',
  },
  {
    id: 'deepseek-coder-1.3b-base-q4_k_m',
    label: 'DeepSeek-Coder 1.3B base (Q4_K_M)',
    url: 'https://huggingface.co/TheBloke/deepseek-coder-1.3b-base-GGUF/resolve/3eeca6090fe5cd8f0486d2da0ad9c27c096754fa/deepseek-coder-1.3b-base.Q4_K_M.gguf',
    fileName: 'deepseek-coder-1.3b-base.Q4_K_M.gguf',
    sizeBytes: 874_000_000,
    note: 'Small FIM model with a 16K context. Quantized by TheBloke. DeepSeek model license.',
  },
  {
    id: 'starcoder2-3b-q4_k_m',
    label: 'StarCoder2 3B (Q4_K_M)',
    url: 'https://huggingface.co/second-state/StarCoder2-3B-GGUF/resolve/7fca3e2da2ce31df411461e2cb9cae2d2b492f35/starcoder2-3b-Q4_K_M.gguf',
    fileName: 'starcoder2-3b-Q4_K_M.gguf',
    sizeBytes: 1_850_000_000,
    note: 'Larger FIM model trained on The Stack v2. Quantized by Second State. BigCode OpenRAIL-M license.',
  },
];

export interface DownloadProgress {
  downloadedBytes: number;
  totalBytes: number;
  bytesPerSecond: number;
  etaSeconds: number | undefined;
}

export interface DownloadOptions {
  /** An http(s) URL of a single-file GGUF. */
  url: string;
  directory: string;
  /** Defaults to the last segment of the URL path. */
  fileName?: string;
  /** Hex sha256 of the whole file. */
  sha256?: string;
  /** Whether the file must be a GGUF (default true); false for the files of a checkpoint to convert. */
  gguf?: boolean;
  /** Extra request headers, e.g. Authorization for a private mirror (HF_TOKEN is picked up by node-llama-cpp). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  onProgress?(p: DownloadProgress): void;
}

export type DownloadErrorCode = 'network' | 'checksum' | 'cancelled' | 'not-gguf' | 'disk';

/** `message` says what went wrong; `hint` is the next step, for a UI to show on its own. */
export class DownloadError extends Error {
  override readonly name = 'DownloadError';

  constructor(
    readonly code: DownloadErrorCode,
    message: string,
    readonly hint: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * Downloads into directory, resuming a previous partial download of the same URL; verifies sha256 when given (a
 * mismatch deletes the file and throws DownloadError code 'checksum'); returns the final path. Never leaves a half
 * file under the final name.
 *
 * The transfer writes `<fileName>.<url hash>.part` (ipull keeps it as `….part.ipull` while unfinished, with its
 * chunk map appended after the data), so only a download of the same URL resumes it. Only a complete file that
 * starts with the GGUF magic and matches sha256 is renamed to fileName, replacing any file of that name.
 * Cancelling (signal) or a failed transfer keeps the partial file for the next call; a file that fails a check
 * is deleted.
 */
export async function downloadModel(options: DownloadOptions): Promise<string> {
  const { url, directory, signal } = options;
  const fileName = options.fileName ?? fileNameFromUrl(url);
  if (!/^https?:$/.test(new URL(url).protocol)) throw new TypeError(`Not an http(s) URL: ${url}`);
  if (!fileName || fileName !== path.basename(fileName) || fileName === '.' || fileName === '..') {
    throw new TypeError(`Not a plain file name: ${JSON.stringify(fileName)}`);
  }
  const finalPath = path.join(directory, fileName);
  const partName = `${fileName}.${createHash('sha256').update(url).digest('hex').slice(0, 12)}.part`;
  if (signal?.aborted) throw cancelled();

  const { createModelDownloader } = await importNodeLlamaCpp();
  const meter = new SpeedMeter();
  const creating = createModelDownloader({
    modelUri: url,
    dirPath: directory,
    fileName: partName,
    headers: options.headers,
    // Reuse a complete .part left by a call that stopped before its checks (ipull compares its size with the
    // server's); keep an unfinished one on cancel so that the next call resumes it.
    skipExisting: true,
    deleteTempFileOnCancel: false,
    onProgress: ({ downloadedSize, totalSize }) => {
      const bytesPerSecond = meter.add(downloadedSize);
      options.onProgress?.({
        downloadedBytes: downloadedSize,
        totalBytes: totalSize,
        bytesPerSecond,
        etaSeconds: bytesPerSecond > 0 && totalSize > 0 ? (totalSize - downloadedSize) / bytesPerSecond : undefined,
      });
    },
  });

  let downloader: ModelDownloader;
  try {
    // A downloader that arrives after the abort has written nothing yet; just release it.
    downloader = await abortable(
      creating,
      signal,
      async () =>
        void creating.then(
          (d) => d.cancel(),
          () => undefined,
        ),
    );
  } catch (error) {
    throw classify(error, signal);
  }
  if (downloader.totalFiles !== 1) {
    await downloader.cancel();
    throw new TypeError(`A split GGUF (${downloader.totalFiles} files) cannot be downloaded as one model: ${url}`);
  }

  let partPath: string;
  try {
    // cancel() closes the partial file with its chunk map, so the next call resumes it.
    partPath = await abortable(downloader.download(), signal, () => downloader.cancel({ deleteTempFile: false }));
  } catch (error) {
    throw classify(error, signal);
  }

  try {
    await trimToServerSize(partPath, downloader.totalSize);
    if (options.gguf !== false && !(await startsWithGgufMagic(partPath))) {
      await fs.rm(partPath, { force: true });
      throw new DownloadError(
        'not-gguf',
        `${url} did not return a GGUF model file.`,
        'The URL probably leads to a web page; use the direct link to the .gguf file ("resolve", not "blob", on ' +
          'Hugging Face).',
      );
    }
    if (options.sha256 !== undefined) {
      const actual = await sha256File(partPath, signal);
      if (actual !== options.sha256.toLowerCase()) {
        await fs.rm(partPath, { force: true });
        throw new DownloadError(
          'checksum',
          `${fileName} has sha256 ${actual}, expected ${options.sha256}.`,
          'The download was corrupted or the file changed on the server; the bad file was deleted — download again.',
        );
      }
    }
    await fs.rename(partPath, finalPath);
  } catch (error) {
    throw classify(error, signal);
  }
  return finalPath;
}

/** Speed over about the last five seconds of progress: steadier than one event's figure, quick to follow a change. */
class SpeedMeter {
  private static readonly WINDOW_MS = 5000;
  /** Bounds the samples kept, whatever the rate of progress events. */
  private static readonly SAMPLE_EVERY_MS = 100;
  private samples: { t: number; bytes: number }[] = [];

  /** Bytes per second from the oldest sample in the window to now; 0 until time has passed. */
  add(bytes: number): number {
    const t = performance.now();
    // Falling bytes: ipull restarted a chunk after an error; measure afresh from here.
    if (bytes < (this.samples.at(-1)?.bytes ?? 0)) this.samples = [];
    const last = this.samples.at(-1);
    if (last === undefined || t - last.t >= SpeedMeter.SAMPLE_EVERY_MS) this.samples.push({ t, bytes });
    // Keep one sample at or before the window's start so that the average spans the whole window.
    while (this.samples.length > 2 && t - this.samples[1].t >= SpeedMeter.WINDOW_MS) this.samples.shift();
    const first = this.samples[0];
    const seconds = (t - first.t) / 1000;
    return seconds > 0 ? (bytes - first.bytes) / seconds : 0;
  }
}

function fileNameFromUrl(url: string): string {
  return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
}

/**
 * Settles like work until signal aborts; from then on, rejects with 'cancelled' once stop() has settled, whatever
 * work does. Neither ipull step ends promptly on its own: creating a downloader takes no signal and retries an
 * unreachable server for minutes, and a request aborted just as its body completes can leave download() pending
 * for good (undici).
 */
function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined, stop: () => Promise<unknown>): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      work.catch(() => undefined);
      void stop()
        .catch(() => undefined)
        .then(() => reject(cancelled()));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        if (signal.aborted) return;
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        if (signal.aborted) return;
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

async function startsWithGgufMagic(file: string): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    return bytesRead === 4 && head.toString('latin1') === GGUF_MAGIC;
  } finally {
    await handle.close();
  }
}

export async function sha256File(file: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash, { signal });
  return hash.digest('hex');
}

function cancelled(): DownloadError {
  return new DownloadError('cancelled', 'The download was cancelled.', 'Download again to resume where it stopped.');
}

const DISK_ERROR_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EACCES',
  'EPERM',
  'EROFS',
  'EBUSY',
  'EISDIR',
  'ENOTDIR',
  'EMFILE',
  'ENFILE',
]);

/**
 * Cuts a finished file back to the size the server announced. ipull appends its chunk map after the data while a
 * download runs and truncates it at the end; a last write of the map after that truncation once left a 526-byte
 * config.json with bytes after it (an unfinished file is never longer than the data and its map).
 */
async function trimToServerSize(file: string, totalSize: number): Promise<void> {
  if (totalSize > 0 && (await fs.stat(file)).size > totalSize) await fs.truncate(file, totalSize);
}

/** ipull reports HTTP failures with `statusCode` and file-system failures with an errno `code`; the rest is network. */
function classify(error: unknown, signal: AbortSignal | undefined): DownloadError {
  if (error instanceof DownloadError) return error;
  if (signal?.aborted) return cancelled();
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && DISK_ERROR_CODES.has(code)) {
    const full = code === 'ENOSPC' || code === 'EDQUOT';
    return new DownloadError(
      'disk',
      `Could not write the model file: ${message}`,
      full
        ? 'Free some disk space, then download again; what was downloaded so far is kept.'
        : 'Check that the models folder is writable and the model file is not open in another program.',
      { cause: error },
    );
  }
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  const hint =
    status === 401 || status === 403
      ? `The server refused access (HTTP ${status}); a gated Hugging Face model needs an access token in HF_TOKEN.`
      : status === 404
        ? 'The file was not found (HTTP 404); check the URL.'
        : 'Check the internet connection and download again; it resumes where it stopped.';
  return new DownloadError('network', `Download failed: ${message}`, hint, { cause: error });
}
