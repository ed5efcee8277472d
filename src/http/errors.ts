export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'INVALID_ID'
  | 'MALFORMED_JSON'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'TASK_NOT_FOUND'
  | 'PROJECT_NOT_FOUND'
  | 'TEAM_MEMBER_NOT_FOUND'
  | 'TIME_LOG_NOT_FOUND'
  | 'TOKEN_NOT_FOUND'
  | 'ROUTE_NOT_FOUND'
  | 'DUPLICATE_NAME'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR';

export type ErrorDetail = { path: string; message: string };

/** The one error type of the service; the error handler turns it into the contract's envelope. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const validationError = (message: string, details?: ErrorDetail[]) =>
  new AppError(400, 'VALIDATION_ERROR', message, details);

export const fieldError = (path: string, message: string) =>
  validationError(`Invalid ${path}: ${message}`, [{ path, message }]);

export const notFound = (code: ErrorCode, what: string) => new AppError(404, code, `${what} not found`);

export const conflict = (code: ErrorCode, message: string) => new AppError(409, code, message);
