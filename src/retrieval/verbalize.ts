import { lineCommentFor } from '../index/languages';
import { shownPath, type Snippet } from './types';

/** Renders packed snippets into the text of a prompt; one per prompt format, chosen by the model family. */
export type ContextRenderer = (snippets: Snippet[], currentPath: string) => string;

export const REPOFORMER_HEADER = 'Here are some relevant code fragments from other files of the repo:';

/**
 * Repoformer / CrossCodeEval style: every line commented in the current file's language, each fragment
 * introduced by its path, the best fragment last so that it sits nearest the code. Begins with "\n\n"
 * as in Repoformer's training data.
 */
export const renderCommentBlocks: ContextRenderer = (snippets, currentPath) => {
  if (snippets.length === 0) return '';
  const comment = lineCommentFor(currentPath);
  const lines = [`${comment} ${REPOFORMER_HEADER}`];
  for (const snippet of [...snippets].reverse()) {
    lines.push(`${comment} --------------------------------------------------`);
    lines.push(`${comment} the below code fragment can be found in:`);
    lines.push(`${comment} ${shownPath(snippet)}`);
    lines.push(`${comment} --------------------------------------------------`);
    for (const line of snippet.text.split('\n')) lines.push(`${comment} ${line}`);
  }
  return `\n\n${lines.join('\n')}\n`;
};
