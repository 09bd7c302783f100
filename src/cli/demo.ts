/**
 * `repogate demo`: one completion, step by step, so that a newcomer sees what RepoGate is for — the gate's
 * reading, the cross-file snippets retrieval packs for the cursor and why each was chosen, then the completion
 * with and without them. When the gate stays closed, retrieval is forced once (and the output says so): the point
 * is to show the pipeline, whatever one small model decides.
 */
import type { CompletionEngine, CompletionResult } from '../engine/completionEngine';
import { describeModel } from '../engine/explain';
import type { GatePolicyName } from '../gate/gate';
import { identifiers } from '../index/tokenize';
import type { ModelInfo } from '../model/tokenModel';
import type { Snippet } from '../retrieval/types';
import { hasWord } from '../retrieval/coverage';

export interface DemoInput {
  engine: CompletionEngine;
  model: ModelInfo;
  /** Said next to the model: the demo model's limits, when it is the one in use. */
  modelNote?: string;
  gate: GatePolicyName;
  repo: { label: string; files: number; symbols: number };
  relPath: string;
  /** The file as if the rest of the cursor's line were not yet typed. */
  text: string;
  /** What the repository's own line continues with after the cursor. */
  rest: string;
  cursor: { line: number; character: number };
}

/** Lines of the file shown around the cursor. */
const CURSOR_LINES_BEFORE = 3;
const CURSOR_LINES_AFTER = 1;
/** Lines of each snippet shown; outlines and short definitions fit whole. */
const SNIPPET_LINES = 8;

export async function runDemo(input: DemoInput): Promise<string> {
  const { engine, cursor } = input;
  const request = { path: input.relPath, text: input.text, cursor, mode: 'line' as const };
  const decided = await engine.complete({ ...request, gate: input.gate });
  const forced = decided.gate.fire ? undefined : await engine.complete({ ...request, gate: 'always' });
  const retrieved = forced ?? decided;
  const plain = decided.gate.fire ? await engine.complete({ ...request, gate: 'never' }) : decided;

  const out: string[] = [];
  out.push('RepoGate demo: one completion, step by step');
  out.push(`repository: ${input.repo.label} (${input.repo.files} files, ${input.repo.symbols} symbols indexed)`);
  out.push(`model: ${describeModel(input.model)}`);
  if (input.modelNote) out.push(`       ${input.modelNote}`);
  out.push('');
  out.push(
    `The cursor, ${input.relPath}:${cursor.line + 1}:${cursor.character + 1} (the rest of its line cut, as if not yet typed):`,
  );
  out.push(...cursorView(input.text, cursor));
  if (input.rest.trim()) out.push(`The repository's own line goes on with: ${input.rest.trim()}`);

  out.push('', '1. The gate: does this completion need other files?');
  out.push(`   ${gateReading(decided)}`);
  if (forced) {
    out.push('   The gate stayed closed, so RepoGate would complete from this file alone.');
    out.push('   For this demo, retrieval is forced once (gate policy "always") to show what it would pack.');
  } else {
    out.push('   The gate opened: RepoGate retrieves cross-file context before completing.');
  }

  const used = retrieved.prompt.contextTokens;
  const packed = countOf(retrieved.snippets.length, 'snippet');
  out.push('', `2. Retrieval: ${packed} packed into the prompt (${used} tokens of cross-file context),`);
  out.push('   best first (the prompt puts the best last, nearest the code), each with why it was chosen:');
  for (const [i, s] of retrieved.snippets.entries()) {
    out.push(`   #${i + 1} ${s.path}:${s.range.start + 1}-${s.range.end} [${s.retriever}] ${s.why}`);
    out.push(...excerpt(s.text));
  }
  const found = whereFound(input.rest, input.text, retrieved.snippets);
  if (found.length) out.push('   The names the line goes on with:', ...found.map((line) => `     ${line}`));
  out.push(`   retrieval took ${retrieved.timings.retrievalMs.toFixed(0)} ms`);

  out.push('', '3. The completion');
  const without = `without cross-file context${forced ? " (the gate's choice)" : ''}:`;
  const withContext = `with the packed context${forced ? ' (forced)' : " (the gate's choice)"}:`;
  const width = Math.max(without.length, withContext.length) + 1;
  out.push(`   ${without.padEnd(width)}${shown(plain)}`);
  out.push(`   ${withContext.padEnd(width)}${shown(retrieved)}`);
  out.push(`   first token after ${firstToken(retrieved)}, total ${retrieved.timings.totalMs.toFixed(0)} ms`);
  out.push('');
  out.push('Judge the pipeline by steps 1 and 2. The text a completion writes depends on the model: run');
  out.push('`repogate complete <dir> <file>:<line>:<col> --model PATH` with a real code model for real completions.');
  return `${out.join('\n')}\n`;
}

function gateReading(result: CompletionResult): string {
  const g = result.gate;
  if (g.source === 'fixed') return `gate "${g.policy}": ${g.fire ? 'always retrieves' : 'never retrieves'}`;
  const what =
    g.source === 'heuristic'
      ? 'P(retrieval helps), from cheap signals at the cursor'
      : `P(<cc>), read from the ${g.source}`;
  return `${what} = ${g.score.toFixed(3)} ${g.fire ? '>' : '≤'} threshold ${g.threshold.toFixed(3)} → ${g.fire ? 'retrieve' : 'no retrieval'}`;
}

function cursorView(text: string, cursor: { line: number; character: number }): string[] {
  const lines = text.split('\n');
  const first = Math.max(0, cursor.line - CURSOR_LINES_BEFORE);
  const last = Math.min(lines.length - 1, cursor.line + CURSOR_LINES_AFTER);
  const width = String(last + 1).length;
  const view: string[] = [];
  for (let i = first; i <= last; i++) {
    const line =
      i === cursor.line ? `${lines[i].slice(0, cursor.character)}▌${lines[i].slice(cursor.character)}` : lines[i];
    view.push(`  ${String(i + 1).padStart(width)} | ${line}`);
  }
  return view;
}

function excerpt(text: string): string[] {
  const lines = text.split('\n');
  const shownLines = lines.slice(0, SNIPPET_LINES).map((line) => `        ${line}`);
  if (lines.length > SNIPPET_LINES) shownLines.push(`        … ${countOf(lines.length - SNIPPET_LINES, 'more line')}`);
  return shownLines;
}

/** For each name the line goes on with: the first packed snippet holding it, or that the file itself has it. */
function whereFound(rest: string, text: string, snippets: readonly Snippet[]): string[] {
  const names = [...new Set(identifiers(rest))];
  return names.map((name) => {
    const at = snippets.findIndex((s) => hasWord(s.text, name));
    if (at >= 0) return `${name}: in #${at + 1} (${snippets[at].path})`;
    return hasWord(text, name) ? `${name}: in this file` : `${name}: in neither`;
  });
}

function shown(result: CompletionResult): string {
  return result.text ? JSON.stringify(result.text) : '(nothing usable)';
}

function firstToken(result: CompletionResult): string {
  return result.timings.firstTokenMs === undefined ? 'no token' : `${result.timings.firstTokenMs.toFixed(0)} ms`;
}

function countOf(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
