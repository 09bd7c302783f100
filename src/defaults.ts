/**
 * The default of every `repogate.*` setting, keyed by the setting's name: the one place they are written. The
 * extension's settings reader, the command line, the engine and retrieval read them here; a unit test checks that
 * package.json contributes the same defaults. A leaf module (no imports), so every layer may import it.
 */
export const DEFAULTS = Object.freeze({
  /** Completions on from the first start: the user installed the extension to get them. */
  enabled: true,
  /** The model runs in RepoGate's own engine process unless the user points it at an inference server. */
  engine: 'local' as 'local' | 'llama-server' | 'openai-compatible' | 'ollama',
  /** No inference server until the user sets one (docs/remote.md). */
  serverUrl: '',
  /** The first model an OpenAI-compatible server lists (Ollama: the only one pulled). */
  serverModel: '',
  /** Ask the server once whether it takes token-id prompts (exact); text only where it does not. */
  serverPromptFormat: 'auto' as 'auto' | 'token-ids' | 'text',
  /** No model until the user picks one (or the demo model): RepoGate asks on first use. */
  modelPath: '',
  /** No policy model: a generator with a `<cc>` token gates itself, others fall back to the heuristic. */
  policyModelPath: '',
  /** Offload what the GPU holds; CPU-only machines get 0 layers from node-llama-cpp. */
  gpuLayers: 'auto' as 'auto' | number,
  /** 0 = half the cores (at least one), which keeps the editor responsive. */
  threads: 0,
  /** 0 = the model's training context, at most 8,192 tokens. */
  contextSize: 0,
  /** The model's own `<cc>` token decides (Repoformer); models without one use the heuristic. */
  gate: 'token' as const,
  /** 0 = the model's recommended threshold, or Repoformer's 0.2. */
  gateThreshold: 0,
  /** Repoformer's cross-file context budget: 512 tokens. */
  contextTokens: 512,
  /** Longest wait after a keystroke: long enough to skip requests mid-burst, short enough to feel immediate. */
  debounceMs: 120,
  /** A block body of a few statements; longer completions are rarely accepted whole. */
  maxLines: 8,
  /** Every language: files the index cannot parse still get plain fill-in-the-middle. */
  enabledLanguages: Object.freeze(['*']) as readonly string[],
  /** Nothing beyond the built-in excludes (dependencies, build output, lock files). */
  excludeGlobs: Object.freeze([]) as readonly string[],
  /** Nothing beyond the built-in secret patterns, which cannot be narrowed. */
  secretGlobs: Object.freeze([]) as readonly string[],
  /** No shared index cache: a workspace without its own cache parses every file once. */
  sharedIndexCache: '',
  /** Characters of packed cross-file context: about 512 tokens at 4 characters a token. */
  contextBudget: 2000,
  /** Where Repoformer checkpoints are published; a mirror or proxy with the same layout can replace it. */
  hubBaseUrl: 'https://huggingface.co',
});

export type SettingName = keyof typeof DEFAULTS;
