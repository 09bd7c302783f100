/**
 * The engine process (forked by EngineClient): the models, the completion engine, and requests by id. A
 * completion's retrieval is asked of the parent, which holds the index client.
 */
import { DEFAULTS } from '../defaults';
import { PendingRequests } from '../index/pendingRequests';
import type { RetrievalRequest, RetrievalResult } from '../retrieval/types';
import { CompletionEngine } from './completionEngine';
import type { EngineSettings, FromEngine, RemoteModelState, ToEngine } from './engineProtocol';
import { ModelHost, type ModelState } from './modelHost';

const send = (message: FromEngine): void => {
  process.send?.(message);
};

function remote(state: ModelState): RemoteModelState {
  return state.kind === 'ready'
    ? { kind: 'ready', generator: state.generator.info, policyModel: state.policyModel?.info }
    : state;
}

let settings: EngineSettings = { gate: DEFAULTS.gate, retrieval: false };
const running = new Map<number, AbortController>();
/** Retrievals asked of the parent, which holds the index client. */
const retrievals = new PendingRequests<RetrievalResult>();
const models = new ModelHost((state) => send({ type: 'state', state: remote(state) }));

function retrieve(request: RetrievalRequest): Promise<RetrievalResult> {
  return retrievals.request((id) => send({ type: 'retrieve', id, request }), undefined);
}

function engine(): CompletionEngine | undefined {
  const state = models.state;
  if (state.kind !== 'ready') return undefined;
  return new CompletionEngine({
    generator: state.generator,
    policyModel: state.policyModel,
    retrieve: settings.retrieval ? retrieve : undefined,
    gate: settings.gate,
    gateThreshold: settings.gateThreshold,
    budget: settings.budget,
    maxLines: settings.maxLines,
    contextBudget: settings.contextBudget,
  });
}

async function complete(id: number, message: Extract<ToEngine, { op: 'complete' }>): Promise<void> {
  const controller = new AbortController();
  running.set(id, controller);
  try {
    const current = engine();
    if (!current) throw new Error('no model is loaded');
    const result = await current.complete(message.request, {
      signal: controller.signal,
      onPartial: (text) => send({ type: 'partial', id, text }),
    });
    send({ type: 'result', id, result });
  } catch (error) {
    send({ type: 'failed', id, message: (error as Error).message });
  } finally {
    running.delete(id);
  }
}

process.on('message', (message: ToEngine) => {
  switch (message.op) {
    case 'load':
      for (const controller of running.values()) controller.abort();
      void models.load(message.request);
      return;
    case 'configure':
      settings = message.settings;
      return;
    case 'complete':
      void complete(message.id, message);
      return;
    case 'warm':
      engine()?.warm(message.request);
      return;
    case 'abort':
      running.get(message.id)?.abort();
      return;
    case 'retrieved': {
      if (message.result) retrievals.resolve(message.id, message.result);
      else retrievals.reject(message.id, new Error(message.error ?? 'retrieval failed'));
      return;
    }
    case 'dispose':
      for (const controller of running.values()) controller.abort();
      void models.dispose().finally(() => {
        send({ type: 'disposed' });
        process.exit(0);
      });
      return;
  }
});

// The parent going away (the editor closing) ends this process too.
process.on('disconnect', () => process.exit(0));
