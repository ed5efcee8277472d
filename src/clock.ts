/*
 * The service's clock: "today" for the rates in force is the date of the service process's clock in
 * UTC, passed to SQL as a parameter (never the database server's current_date), so libfaketime moves
 * it, and tests set it with setClock.
 */
let fixed: Date | undefined;

export function now(): Date {
  return fixed ? new Date(fixed.getTime()) : new Date();
}

/** Today's date as YYYY-MM-DD (UTC). */
export function today(): string {
  return now().toISOString().slice(0, 10);
}

/** For tests: freeze the clock at `at`, or give it back to the system with undefined. */
export function setClock(at: Date | undefined): void {
  fixed = at === undefined ? undefined : new Date(at.getTime());
}
