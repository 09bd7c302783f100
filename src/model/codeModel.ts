import * as os from 'os';
import type { Llama, LlamaContext, LlamaModel } from 'node-llama-cpp';
import { detectFamily, type FamilyOptions } from './families';
import { FimSession } from './fimSession';
import { controlTokens } from './gguf';
import { checkModelFile, ModelFileError } from './modelFile';
import { importNodeLlamaCpp } from './nodeLlamaCpp';
import { TokenizingModel, type ModelInfo, type TokenModel } from './tokenModel';

export interface ModelOptions extends FamilyOptions {
  modelPath: string;
  /** CPU threads: node-llama-cpp's default is too many for small machines (docs/benchmarks.md, "Threads"). */
  threads?: number;
  /** Layers to offload: 'auto' lets llama.cpp fit what the GPU holds; 0 keeps everything on the CPU. */
  gpuLayers?: 'auto' | number;
  /** Tokens of context; default the model's training context, at most 8,192. */
  contextSize?: number;
}

/** Code evaluated once at load to measure the prompt speed (long enough to fill CALIBRATION_TOKENS). */
const CALIBRATION_TEXT =
  'export function clamp(value: number, low: number, high: number): number {\n  return Math.min(high, Math.max(low, value));\n}\n';
const CALIBRATION_TOKENS = 24;

/** One thread per two cores, at least one: leaves the editor and the indexer a core on small machines. */
export function defaultThreads(): number {
  return Math.max(1, Math.min(8, Math.floor(os.availableParallelism() / 2)));
}

let sharedLlama: Promise<Llama> | undefined;

/** One llama.cpp binding per process, with GPU offload (CUDA, Vulkan or Metal) when the machine has one. */
export function getSharedLlama(): Promise<Llama> {
  sharedLlama ??= importNodeLlamaCpp().then(({ getLlama }) => getLlama({ gpu: 'auto' }));
  return sharedLlama;
}

/** A loaded GGUF code model with its family, its context and one FIM session. */
export class CodeModel extends TokenizingModel implements TokenModel {
  private constructor(
    readonly info: ModelInfo,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    readonly session: FimSession,
    bos: number | undefined,
  ) {
    super(info.family, (text) => model.tokenize(text, false), bos);
  }

  /**
   * Checks the file first (a clear ModelFileError for missing, non-GGUF, truncated, unsupported or FIM-less
   * files), then loads it. A context the machine cannot hold is a ModelFileError too.
   */
  static async load(options: ModelOptions): Promise<CodeModel> {
    const started = performance.now();
    const file = await checkModelFile(options.modelPath);
    const family = detectFamily({ controlTokens: controlTokens(file.header), metadata: file.header.metadata }, options);
    const llama = await getSharedLlama();
    const threads = options.threads ?? defaultThreads();
    const model = await llama.loadModel({ modelPath: options.modelPath, gpuLayers: options.gpuLayers ?? 'auto' });
    const contextSize = options.contextSize ?? Math.min(model.trainContextSize, 8192);
    let context: LlamaContext;
    try {
      context = await model.createContext({
        contextSize,
        batchSize: Math.min(contextSize, 1024),
        threads,
        sequences: 1,
      });
    } catch (error) {
      await model.dispose();
      throw new ModelFileError(
        'context-too-large',
        options.modelPath,
        `${options.modelPath}: a context of ${contextSize} tokens does not fit in memory (${(error as Error).message}).`,
        'Lower "repogate.contextSize" or the GPU layers, or choose a smaller model.',
      );
    }
    const threshold = file.header.metadata.get('repogate.gate_threshold');
    const info: ModelInfo = {
      path: options.modelPath,
      name: file.name,
      family,
      backend: llama.gpu === false ? 'cpu' : llama.gpu,
      gpuLayers: model.gpuLayers,
      totalLayers: model.fileInsights.totalLayers,
      threads,
      contextSize: context.contextSize,
      trainContextSize: model.trainContextSize,
      gateThreshold: typeof threshold === 'number' ? threshold : undefined,
      loadMs: performance.now() - started,
    };
    const addBos = file.header.metadata.get('tokenizer.ggml.add_bos_token') === true;
    const bos = addBos ? (model.tokens.bos ?? undefined) : undefined;
    const session = new FimSession(model, context.getSequence());
    // One short evaluation measures the prompt speed, so that the first request can already fit its time budget.
    const sample = model.tokenize(CALIBRATION_TEXT, false).slice(0, CALIBRATION_TOKENS);
    await session.prefill(sample, new AbortController().signal);
    await session.reset();
    return new CodeModel(info, model, context, session, bos === undefined ? undefined : Number(bos));
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
