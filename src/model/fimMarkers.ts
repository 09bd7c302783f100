/**
 * The fill-in-the-middle marker texts of the vocabularies RepoGate knows: one list, read by family detection
 * (families.ts) and by the model-file check that finds FIM ids a GGUF's metadata does not give (modelFile.ts).
 */
export interface FimMarkers {
  prefix: string;
  suffix: string;
  middle: string;
}

export const FIM_MARKERS = {
  starcoder: { prefix: '<fim_prefix>', suffix: '<fim_suffix>', middle: '<fim_middle>' },
  qwen: { prefix: '<|fim_prefix|>', suffix: '<|fim_suffix|>', middle: '<|fim_middle|>' },
  deepseek: { prefix: '<｜fim▁begin｜>', suffix: '<｜fim▁hole｜>', middle: '<｜fim▁end｜>' },
  codellama: { prefix: '▁<PRE>', suffix: '▁<SUF>', middle: '▁<MID>' },
  mistral: { prefix: '[PREFIX]', suffix: '[SUFFIX]', middle: '[MIDDLE]' },
} as const satisfies Record<string, FimMarkers>;

/**
 * Every marker llama.cpp (llama-vocab.cpp) recognises when the ids are not in the metadata, plus Mistral's
 * bracketed ones, in the order they are tried: the first present wins.
 */
export const FIM_MARKERS_TRIED: readonly FimMarkers[] = [
  FIM_MARKERS.qwen,
  { prefix: '<fim-prefix>', suffix: '<fim-suffix>', middle: '<fim-middle>' },
  FIM_MARKERS.starcoder,
  FIM_MARKERS.deepseek,
  { prefix: '<PRE>', suffix: '<SUF>', middle: '<MID>' },
  FIM_MARKERS.codellama,
  { prefix: '<|code_prefix|>', suffix: '<|code_suffix|>', middle: '<|code_middle|>' },
  { prefix: '<|prefix|>', suffix: '<|suffix|>', middle: '<|middle|>' },
  FIM_MARKERS.mistral,
];
