/**
 * Holds the loaded models in the engine process and says what state they are in (reported to the editor side
 * for the status bar and the provider). A newer load supersedes an older one, and a failure leaves a clear
 * error, never a half-loaded model.
 */
import { CodeModel, type ModelOptions } from '../model/codeModel';
import { RemoteModel, type ServerOptions } from '../model/remote/remoteModel';
import type { TokenModel } from '../model/tokenModel';

/** The host's models; `M` is the model itself in the engine process, its info on the other side of the process. */
export type ModelState<M = TokenModel> =
  | { kind: 'no-model' }
  | { kind: 'loading'; path: string }
  | { kind: 'ready'; generator: M; policyModel?: M }
  | { kind: 'error'; message: string; hint?: string };

export interface ModelRequest {
  generator?: ModelOptions;
  policyModel?: ModelOptions;
  /** The generator runs on this server; `generator.modelPath` then names the GGUF whose vocabulary it shares. */
  server?: ServerOptions;
}

export class ModelHost {
  private current: ModelState = { kind: 'no-model' };
  private generation = 0;

  constructor(private readonly onChange: (state: ModelState) => void = () => undefined) {}

  get state(): ModelState {
    return this.current;
  }

  /** Loads what `request` names (nothing: no model), replacing and disposing what was loaded. */
  async load(request: ModelRequest): Promise<ModelState> {
    const generation = ++this.generation;
    await this.release();
    if (!request.generator) return this.set({ kind: 'no-model' });
    this.set({ kind: 'loading', path: request.generator.modelPath });
    let generator: TokenModel | undefined;
    let policyModel: TokenModel | undefined;
    try {
      // A server's failures change what the status bar says, not the state: the next request tries again.
      generator = request.server
        ? await RemoteModel.load(request.generator, request.server, () => this.onChange(this.current))
        : await CodeModel.load(request.generator);
      policyModel = request.policyModel ? await CodeModel.load(request.policyModel) : undefined;
    } catch (error) {
      await generator?.dispose();
      if (generation !== this.generation) return this.current;
      const e = error as Error & { hint?: string };
      return this.set({ kind: 'error', message: e.message, hint: e.hint });
    }
    if (generation !== this.generation) {
      await policyModel?.dispose();
      await generator.dispose();
      return this.current;
    }
    return this.set({ kind: 'ready', generator, policyModel });
  }

  async dispose(): Promise<void> {
    this.generation++;
    await this.release();
  }

  private async release(): Promise<void> {
    const previous = this.current;
    if (previous.kind !== 'ready') return;
    this.current = { kind: 'no-model' };
    await previous.policyModel?.dispose();
    await previous.generator.dispose();
  }

  private set(state: ModelState): ModelState {
    this.current = state;
    this.onChange(state);
    return state;
  }
}
