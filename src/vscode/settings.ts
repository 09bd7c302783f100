import * as vscode from 'vscode';
import { DEFAULTS } from '../defaults';
import type { GatePolicyName } from '../gate/gate';
import { DEFAULT_EXCLUDE_GLOBS } from '../index/defaultGlobs';
import { isGatePolicy } from '../gate/gate';
import type { PromptFormatSetting } from '../model/remote/openaiCompatible';
import type { RemoteEngine } from '../model/tokenModel';

export type EngineKind = 'local' | RemoteEngine;
const ENGINES: readonly EngineKind[] = ['local', 'llama-server', 'openai-compatible', 'ollama'];
const PROMPT_FORMATS: readonly PromptFormatSetting[] = ['auto', 'token-ids', 'text'];

export interface RepoGateSettings {
  enabled: boolean;
  /** Where the model runs: in the editor's engine process, or on an inference server. */
  engine: EngineKind;
  serverUrl: string;
  serverModel: string;
  /** OpenAI-compatible servers: prompts as token ids or text ('auto' asks the server). */
  serverPromptFormat: PromptFormatSetting;
  modelPath: string;
  policyModelPath: string;
  gpuLayers: 'auto' | number;
  threads?: number;
  contextSize?: number;
  gate: GatePolicyName;
  gateThreshold?: number;
  contextTokens: number;
  contextBudget: number;
  debounceMs: number;
  maxLines: number;
  enabledLanguages: string[];
  secretGlobs: string[];
  /** The built-in exclusions (dependencies, build output) followed by the user's. */
  excludeGlobs: string[];
  /** A shared index cache file to warm-start a workspace without a cache of its own; empty: none. */
  sharedIndexCache: string;
}

/** Zero means "the default" for numeric settings that have a computed default. */
const positive = (value: number | undefined): number | undefined => (value && value > 0 ? value : undefined);

export function readSettings(): RepoGateSettings {
  const c = vscode.workspace.getConfiguration('repogate');
  const gpuLayers = c.get<string | number>('gpuLayers', DEFAULTS.gpuLayers);
  const gate = c.get<string>('gate', DEFAULTS.gate);
  const engine = c.get<string>('engine', DEFAULTS.engine);
  const promptFormat = c.get<string>('serverPromptFormat', DEFAULTS.serverPromptFormat);
  return {
    enabled: c.get<boolean>('enabled', DEFAULTS.enabled),
    engine: ENGINES.find((e) => e === engine) ?? 'local',
    serverUrl: c.get<string>('serverUrl', DEFAULTS.serverUrl).trim(),
    serverModel: c.get<string>('serverModel', DEFAULTS.serverModel).trim(),
    serverPromptFormat: PROMPT_FORMATS.find((f) => f === promptFormat) ?? DEFAULTS.serverPromptFormat,
    modelPath: c.get<string>('modelPath', DEFAULTS.modelPath).trim(),
    policyModelPath: c.get<string>('policyModelPath', DEFAULTS.policyModelPath).trim(),
    gpuLayers:
      typeof gpuLayers === 'number'
        ? gpuLayers
        : gpuLayers === 'auto' || Number.isNaN(Number(gpuLayers))
          ? 'auto'
          : Number(gpuLayers),
    threads: positive(c.get<number>('threads')),
    contextSize: positive(c.get<number>('contextSize')),
    gate: isGatePolicy(gate) ? gate : DEFAULTS.gate,
    gateThreshold: positive(c.get<number>('gateThreshold')),
    contextTokens: c.get<number>('contextTokens', DEFAULTS.contextTokens),
    contextBudget: c.get<number>('contextBudget', DEFAULTS.contextBudget),
    debounceMs: c.get<number>('debounceMs', DEFAULTS.debounceMs),
    maxLines: c.get<number>('maxLines', DEFAULTS.maxLines),
    enabledLanguages: c.get<string[]>('enabledLanguages', [...DEFAULTS.enabledLanguages]),
    secretGlobs: c.get<string[]>('secretGlobs', [...DEFAULTS.secretGlobs]),
    excludeGlobs: [...DEFAULT_EXCLUDE_GLOBS, ...c.get<string[]>('excludeGlobs', [...DEFAULTS.excludeGlobs])],
    sharedIndexCache: c.get<string>('sharedIndexCache', DEFAULTS.sharedIndexCache).trim(),
  };
}
