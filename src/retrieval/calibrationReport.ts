/**
 * The log's words for a calibration (src/vscode/reindex.ts), apart from calibration.ts so that the extension host
 * loads no parser for them. Profiles arrive copied from the index process: they are told apart by name.
 */
import type { WorkspaceCalibration } from './calibration';

const percent = (r: number): string => `${Math.round(r * 100)}%`;

/**
 * The log's line for a calibration: one project's as it always read; of several, only the projects where one
 * retriever won, so that a monorepo of many packages stays one short line.
 */
export function describeCalibration(done: WorkspaceCalibration): string {
  const ms = Math.round(done.ms);
  if (done.projects.length === 1) {
    const [only] = done.projects;
    const recall = Object.entries(only.recall).map(([name, r]) => `${name} ${percent(r)}`);
    const choice = only.profile.name === 'fused' ? 'all retrievers fused' : `${only.profile.name} alone`;
    return `retrieval calibrated on ${only.samples} lines of this repository in ${ms} ms: ${choice} (${recall.join(', ')})`;
  }
  const lines = done.projects.reduce((sum, p) => sum + p.samples, 0);
  const chosen = done.projects.filter((p) => p.profile.name !== 'fused');
  const won = chosen.map(
    (p) =>
      `${p.project || '.'}: ${p.profile.name} alone (${percent(p.recall[p.profile.name])}, fused ${percent(p.recall.fused)})`,
  );
  const rest = done.projects.length - chosen.length;
  if (rest > 0) won.push(chosen.length ? `the other ${rest}: all retrievers fused` : 'each: all retrievers fused');
  return `retrieval calibrated on ${lines} lines of ${done.projects.length} projects in ${ms} ms: ${won.join('; ')}`;
}
