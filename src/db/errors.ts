type DriverError = { code?: string; constraint?: string };

/** PostgreSQL's unique_violation, as raised by both node-postgres and PGlite. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as DriverError)?.code === '23505';
}
