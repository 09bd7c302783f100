export {
  convertCheckpoint,
  GATE_THRESHOLD,
  GATE_THRESHOLD_MULTILINE,
  type ConvertOptions,
  type ConvertResult,
  type OutputType,
} from './convert';
export { CheckpointError, type CheckpointErrorCode } from './errors';
