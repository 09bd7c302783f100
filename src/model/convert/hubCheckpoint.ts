// The old path of src/convert/hubCheckpoint.ts, kept only for src/vscode/commands.ts until its import names the
// new one (then this file goes; the import check lists it as its one exception).
export { fetchAndConvert, REPOFORMER_SIZES, type RepoformerSize } from '../../convert/hubCheckpoint';
