import * as vscode from 'vscode';
import type { GatePolicyName } from '../gate/gate';
import { isGatePolicy } from '../gate/gate';
import type { RemoteEngine } from '../model/tokenModel';

export type EngineKind = 'local' | RemoteEngine;
const ENGINES: readonly EngineKind[] = ['local', 'llama-server', 'openai-compatible'];

export interface RepoGateSettings {
  enabled: boolean;
  /** Where the model runs: in the editor's engine process, or on an inference server. */
  engine: EngineKind;
  serverUrl: string;
  serverModel: string;
  modelPath: string;
  policyModelPath: string;
  gpuLayers: 'auto' | number;
  threads?: number;
  contextSize?: number;
  gate: GatePolicyName;
  threshold?: number;
  contextTokens: number;
  contextChars: number;
  debounceMs: number;
  maxLines: number;
  enabledLanguages: string[];
  secretGlobs: string[];
}

/** Zero means "the default" for numeric settings that have a computed default. */
const positive = (value: number | undefined): number | undefined => (value && value > 0 ? value : undefined);

export function readSettings(): RepoGateSettings {
  const c = vscode.workspace.getConfiguration('repogate');
  const gpuLayers = c.get<string | number>('gpuLayers', 'auto');
  const gate = c.get<string>('gate', 'token');
  const engine = c.get<string>('engine', 'local');
  return {
    enabled: c.get<boolean>('enabled', true),
    engine: ENGINES.find((e) => e === engine) ?? 'local',
    serverUrl: c.get<string>('serverUrl', '').trim(),
    serverModel: c.get<string>('serverModel', '').trim(),
    modelPath: c.get<string>('modelPath', '').trim(),
    policyModelPath: c.get<string>('policyModelPath', '').trim(),
    gpuLayers: typeof gpuLayers === 'number' ? gpuLayers : gpuLayers === 'auto' || Number.isNaN(Number(gpuLayers)) ? 'auto' : Number(gpuLayers),
    threads: positive(c.get<number>('threads')),
    contextSize: positive(c.get<number>('contextSize')),
    gate: isGatePolicy(gate) ? gate : 'token',
    threshold: positive(c.get<number>('gateThreshold')),
    contextTokens: c.get<number>('contextTokens', 512),
    contextChars: c.get<number>('contextBudget', 2000),
    debounceMs: c.get<number>('debounceMs', 120),
    maxLines: c.get<number>('maxLines', 8),
    enabledLanguages: c.get<string[]>('enabledLanguages', ['*']),
    secretGlobs: c.get<string[]>('secretGlobs', []),
  };
}
