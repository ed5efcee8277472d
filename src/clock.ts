/*
 * The service's clock: "today" for the rates and roles in force comes from the service process's
 * clock (never the database server's current_date), so libfaketime moves it, and tests set it with
 * setClock. SQL gets the instant as a parameter (:now) and takes its date in the project's time zone
 * (todayOf); code that needs the same date without a query uses todayIn.
 */
let fixed: Date | undefined;

export function now(): Date {
  return fixed ? new Date(fixed.getTime()) : new Date();
}

/** The service clock's instant as an ISO 8601 timestamp (what SQL gets as :now). */
export function nowIso(): string {
  return now().toISOString();
}

/** Today's date as YYYY-MM-DD (UTC). */
export function today(): string {
  return now().toISOString().slice(0, 10);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The date (YYYY-MM-DD) of `at` in the IANA time zone `timeZone`. */
export function dateIn(timeZone: string, at: Date): string {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, format);
  }
  return format.format(at);
}

/** Today's date (YYYY-MM-DD) in the IANA time zone `timeZone`, by the service clock. */
export function todayIn(timeZone: string): string {
  return dateIn(timeZone, now());
}

/** SQL: today's date in the time zone of the projects row `alias`, from the service clock's instant bound as :now. */
export const todayOf = (alias: string) => `(cast(:now as timestamptz) at time zone ${alias}.time_zone)::date`;

/** For tests: freeze the clock at `at`, or give it back to the system with undefined. */
export function setClock(at: Date | undefined): void {
  fixed = at === undefined ? undefined : new Date(at.getTime());
}
