/** Scores of the generation benchmark, as CrossCodeEval computes them. */

/** Exact match of the completed line, surrounding whitespace ignored. */
export function exactMatch(prediction: string, truth: string): boolean {
  return prediction.trim() === truth.trim();
}

/**
 * Edit similarity in [0, 1]: CrossCodeEval's `fuzz.ratio / 100` (thefuzz, Indel distance):
 * 2 · LCS(a, b) / (|a| + |b|), on the stripped strings.
 */
export function editSimilarity(prediction: string, truth: string): number {
  const a = prediction.trim();
  const b = truth.trim();
  if (!a.length && !b.length) return 1;
  let previous = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++)
      row[j] = a[i - 1] === b[j - 1] ? previous[j - 1] + 1 : Math.max(previous[j], row[j - 1]);
    previous = row;
  }
  return (2 * previous[b.length]) / (a.length + b.length);
}

/** ROC AUC of `score` separating positives from negatives (ties count half); 0.5 when a class is empty. */
export function rocAuc(samples: readonly { score: number; positive: boolean }[]): number {
  const positives = samples.filter((s) => s.positive);
  const negatives = samples.filter((s) => !s.positive);
  if (!positives.length || !negatives.length) return 0.5;
  // NaN equals nothing, not even itself: the tie loop below would never advance.
  if (samples.some((s) => Number.isNaN(s.score)))
    throw new Error('ROC AUC of scores that are not numbers (a gate model without weights for some feature?)');
  const ranked = [...samples].sort((x, y) => x.score - y.score);
  let rankSum = 0;
  for (let i = 0; i < ranked.length;) {
    let j = i;
    while (j < ranked.length && ranked[j].score === ranked[i].score) j++;
    const averageRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if (ranked[k].positive) rankSum += averageRank;
    i = j;
  }
  return (rankSum - (positives.length * (positives.length + 1)) / 2) / (positives.length * negatives.length);
}
