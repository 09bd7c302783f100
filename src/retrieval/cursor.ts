// The old path of src/index/cursor.ts, kept only for src/engine/completionEngine.ts until its import names the
// new one (then this file goes).
export { offsetOf } from '../index/cursor';
