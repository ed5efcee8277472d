import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      // Tokens must never reach the logs, whatever a future log call passes in.
      redact: { paths: ['req.headers.authorization', 'token', '*.token', 'secret'], censor: '[redacted]' },
    },
    destination,
  );
}
