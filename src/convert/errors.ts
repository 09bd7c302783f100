/** Why a checkpoint could not be converted; `message` says what is wrong and what to do. */
export type CheckpointErrorCode =
  | 'truncated'
  | 'missing-file'
  | 'architecture'
  | 'tokenizer'
  | 'unsafe-pickle'
  | 'unsupported'
  | 'config'
  | 'cancelled';

export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';

  constructor(
    readonly code: CheckpointErrorCode,
    message: string,
  ) {
    super(message);
  }
}
