/**
 * Messages between the editor side and the engine process, which holds the models and runs completions, so
 * that loading a model (module loading, native setup) and tokenizing big prompts never run on the extension
 * host's event loop, and a native crash takes down that process only.
 */
import type { GatePolicyName } from '../gate/gate';
import type { ModelInfo } from '../model/tokenModel';
import type { PromptBudget } from '../model/promptBudget';
import type { RetrievalRequest, RetrievalResult } from '../retrieval/types';
import type { CompletionRequest, CompletionResult } from './completionEngine';
import type { ModelRequest, ModelState } from './modelHost';

/** What the engine process reports of its models: infos only, the models stay in that process. */
export type RemoteModelState = ModelState<ModelInfo>;

/** Engine options that can cross a process boundary (retrieval is a round trip to the editor side). */
export interface EngineSettings {
  gate: GatePolicyName;
  gateThreshold?: number;
  budget?: Partial<PromptBudget>;
  maxLines?: number;
  contextBudget?: number;
  retrieval: boolean;
}

export type ToEngine =
  | { op: 'load'; request: ModelRequest }
  | { op: 'configure'; settings: EngineSettings }
  | { op: 'complete'; id: number; request: CompletionRequest }
  | { op: 'warm'; request: CompletionRequest }
  | { op: 'abort'; id: number }
  | { op: 'retrieved'; id: number; result?: RetrievalResult; error?: string }
  | { op: 'dispose' };

export type FromEngine =
  | { type: 'state'; state: RemoteModelState }
  | { type: 'partial'; id: number; text: string }
  | { type: 'result'; id: number; result: CompletionResult }
  | { type: 'failed'; id: number; message: string }
  | { type: 'retrieve'; id: number; request: RetrievalRequest }
  | { type: 'disposed' };
