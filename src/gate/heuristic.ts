/**
 * The heuristic gate for models without a `<cc>` token: a logistic model over cheap signals at the cursor, a
 * trial retrieval and a short draft made without retrieval. The weights are data (heuristicWeights.json),
 * fitted offline on `make-tasks` tasks by tools/gate/fit-heuristic.mjs.
 */
import { identifiers } from '../index/tokenize';
import type { Cursor, Snippet } from '../retrieval/types';
import fitted from './heuristicWeights.json';

export const HEURISTIC_FEATURES = [
  'imported_near',
  'near_once',
  'imported_ratio',
  'local_imports',
  'right_novel',
  'file_names',
  'retrieval_top',
  'context_novel',
  'draft_uncertainty',
  'draft_novel',
  'foreign_near',
  'foreign_member_near',
  'foreign_member_share',
  'recurring_near',
  'foreign_member_api',
] as const;
export type HeuristicFeatureName = (typeof HEURISTIC_FEATURES)[number];
export type HeuristicFeatures = Record<HeuristicFeatureName, number>;

export interface HeuristicModel {
  /** Standardisation fitted with the weights: z = (x - mean) / scale. */
  mean: Record<HeuristicFeatureName, number>;
  scale: Record<HeuristicFeatureName, number>;
  weights: Record<HeuristicFeatureName, number>;
  bias: number;
  threshold: number;
}

export const FITTED_HEURISTIC: HeuristicModel = fitted as unknown as HeuristicModel;

export interface HeuristicInputs {
  text: string;
  cursor: Cursor;
  /** A retrieval made without a draft. */
  trial: readonly Snippet[];
  /** A short completion made without retrieval, with the probability of each of its tokens. */
  draft: { text: string; confidences: readonly number[] };
  /** Which of the file's `gateNames` another indexed file declares (asked along with the trial retrieval). */
  declaredElsewhere: ReadonlySet<string>;
}

/** Lines before the cursor whose identifiers count as "near", and lines after it that are looked at. */
const NEAR_LINES = 8;
const RIGHT_LINES = 5;
const IMPORT_LINE =
  /^\s*(?:import\b|from\s+\S+\s+import\b|export\s+(?:\*|\{[^}]*\})\s+from\b|use\s|package\s)|\brequire\s*\(/;
const LOCAL_IMPORT = /['"]\.\.?\//;
const MAX_LOCAL_IMPORTS = 10;
/** Imported names near the cursor are counted up to this: past a few, more says nothing new (the weights were fitted so). */
const MAX_IMPORTED_NEAR = 4;
/** Shorter lines (`});`, `break;`) say nothing about what the code around them needs. */
const MIN_CODE_CHARS = 6;

/** Names a file brings in from elsewhere: every identifier on its import lines. */
export function importedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) if (IMPORT_LINE.test(line)) for (const id of identifiers(line)) names.add(id);
  return names;
}

const share = (part: number, whole: number): number => (whole ? part / whole : 0);

function nameCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of identifiers(text)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

const COMMENT_LINE = /^\s*(?:\/\/|\/\*|\*|#)/;
const MEMBER = /\.\s*([A-Za-z_$][\w$]*)/g;
const memberNames = (line: string): string[] => [...line.matchAll(MEMBER)].map((m) => m[1]);

/** At most this many names are asked of the index per request: a huge file's would cost the round trip. */
export const MAX_ASKED_NAMES = 2000;

/**
 * The names the line signals ask the index about, those on the lines nearest the cursor first (at most `limit`):
 * names the file mentions exactly once, and members (`x.name`), whatever their count.
 */
export function gateNames(text: string, cursorLine: number, limit = MAX_ASKED_NAMES): string[] {
  const counts = nameCounts(text);
  const lines = text.split('\n');
  const names = new Set<string>();
  for (let d = 0; names.size < limit && (cursorLine - d >= 0 || cursorLine + d < lines.length); d++) {
    for (const row of d ? [cursorLine - d, cursorLine + d] : [cursorLine]) {
      const line = lines[row] ?? '';
      for (const id of [...identifiers(line).filter((id) => counts.get(id) === 1), ...memberNames(line)])
        if (names.size < limit) names.add(id);
    }
  }
  return [...names];
}

/** Distances (in lines) at which a line's weight halves, for the nearest, the near and the wider line signals. */
const NEAREST_SCALE = 1.5;
const NEAR_SCALE = 3;
const WIDE_SCALE = 12;

/**
 * The kinds of lines around the cursor, weighted by 1 / (1 + distance / scale): lines that use a name found
 * once in the file and declared in another file (as the lines needing another file's code do), those where that
 * name is a member (`x.name`), lines whose names all recur in the file (as self-contained lines do), and the share
 * of members, on the nearest lines, that another file declares (an object of another module's API in use). Lines
 * that needed another file cluster: a file calls into another module in runs.
 */
function lineKinds(
  lines: readonly string[],
  cursorLine: number,
  counts: Map<string, number>,
  foreign: ReadonlySet<string>,
) {
  let [nearestWeight, nearWeight, wideWeight, foreignNear, memberNear, memberWide, recurringNear, apiNearest] = [
    0, 0, 0, 0, 0, 0, 0, 0,
  ];
  lines.forEach((text, i) => {
    if (i === cursorLine || text.trim().length < MIN_CODE_CHARS || COMMENT_LINE.test(text) || IMPORT_LINE.test(text))
      return;
    const ids = identifiers(text);
    const once = (id: string): boolean => counts.get(id) === 1 && foreign.has(id);
    const members = memberNames(text);
    const distance = Math.abs(i - cursorLine);
    const nearest = 1 / (1 + distance / NEAREST_SCALE);
    const near = 1 / (1 + distance / NEAR_SCALE);
    const wide = 1 / (1 + distance / WIDE_SCALE);
    nearestWeight += nearest;
    nearWeight += near;
    wideWeight += wide;
    apiNearest += nearest * share(members.filter((m) => foreign.has(m)).length, members.length);
    if (ids.some(once)) foreignNear += near;
    if (members.some(once)) {
      memberNear += near;
      memberWide += wide;
    }
    if (ids.length >= 2 && ids.every((id) => (counts.get(id) ?? 0) >= 2)) recurringNear += near;
  });
  return {
    foreign_near: share(foreignNear, nearWeight),
    foreign_member_near: share(memberWide, wideWeight),
    foreign_member_share: memberNear + recurringNear ? memberNear / (memberNear + recurringNear) : 0.5,
    recurring_near: share(recurringNear, nearWeight),
    foreign_member_api: share(apiNearest, nearestWeight),
  };
}

/**
 * Signals measured to separate lines that need another file from lines that do not (tools/gate/fit.sh): names
 * used near the cursor that the file uses nowhere else, how much of the file is imported, names after the
 * cursor that the left context lacks, the trial retrieval's best score and the share of its names that are new
 * to the file, the draft's uncertainty and new names, and the kinds of lines around the cursor (`lineKinds`).
 */
export function heuristicFeatures(inputs: HeuristicInputs): HeuristicFeatures {
  const lines = inputs.text.split('\n');
  const { line, character } = inputs.cursor;
  const left = [...lines.slice(0, line), (lines[line] ?? '').slice(0, character)];
  const imported = importedNames(inputs.text);
  const counts = nameCounts(inputs.text);
  const near = left.slice(-NEAR_LINES);
  let importedNear = 0;
  near.forEach((text, i) => {
    const distance = near.length - 1 - i;
    for (const id of new Set(identifiers(text))) if (imported.has(id)) importedNear += 1 / (1 + distance / 2);
  });
  const nearIds = identifiers(near.join('\n'));
  const leftIds = new Set(identifiers(left.join('\n')));
  const rightIds = identifiers(
    [(lines[line] ?? '').slice(character), ...lines.slice(line + 1, line + 1 + RIGHT_LINES)].join('\n'),
  );
  const contextIds = new Set(identifiers(inputs.trial.map((s) => s.text).join('\n')));
  const draftLine = inputs.draft.text.split('\n').find((l) => l.trim()) ?? '';
  const draftIds = identifiers(draftLine);
  const confidences = inputs.draft.confidences;
  return {
    imported_near: Math.min(importedNear, MAX_IMPORTED_NEAR),
    near_once: share(nearIds.filter((id) => (counts.get(id) ?? 0) <= 1).length, nearIds.length),
    imported_ratio: share(imported.size, counts.size),
    local_imports: Math.min(lines.filter((l) => IMPORT_LINE.test(l) && LOCAL_IMPORT.test(l)).length, MAX_LOCAL_IMPORTS),
    right_novel: share(rightIds.filter((id) => !leftIds.has(id)).length, rightIds.length),
    file_names: Math.log1p(counts.size),
    retrieval_top: inputs.trial[0]?.score ?? 0,
    context_novel: share([...contextIds].filter((id) => !counts.has(id)).length, contextIds.size),
    draft_uncertainty: confidences.length ? 1 - confidences.reduce((a, b) => a + b, 0) / confidences.length : 1,
    draft_novel: share(draftIds.filter((id) => !counts.has(id)).length, draftIds.length),
    ...lineKinds(lines, line, counts, inputs.declaredElsewhere),
  };
}

export function heuristicProbability(features: HeuristicFeatures, model: HeuristicModel): number {
  let z = model.bias;
  for (const name of HEURISTIC_FEATURES)
    z += model.weights[name] * ((features[name] - model.mean[name]) / (model.scale[name] || 1));
  return 1 / (1 + Math.exp(-z));
}
