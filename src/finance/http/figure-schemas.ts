import { z } from 'zod';
import { exactDecimal } from '../../openapi/common';
import type { Figure } from '../rules/figures';

/* The zod schemas of the figures (and so the OpenAPI document's), derived from the figure model. */

export const hours = (what: string) => exactDecimal(`${what}, hours rounded to 2 decimals`);
export const money = (what: string) => exactDecimal(`${what}, in the project's currency, rounded to its minor unit`);

/**
 * The zod fields of some figures of the model (figures.ts), each described by its meaning, or by
 * `sum` for sums of them (a figure that is not a summary's, such as variance, keeps its meaning).
 */
export function figureFields<F extends Figure>(
  figures: readonly F[],
  sum?: string,
): Record<F['name'], ReturnType<typeof exactDecimal> | z.ZodBoolean> {
  return Object.fromEntries(
    figures.map((figure) => {
      // A flag keeps its meaning in sums too: whether any task summed has it.
      const what = sum !== undefined && figure.summary && figure.unit !== 'flag' ? sum : figure.meaning;
      return [figure.name, figure.unit === 'flag' ? z.boolean().describe(what) : figure.unit === 'hours' ? hours(what) : money(what)];
    }),
  ) as Record<F['name'], ReturnType<typeof exactDecimal> | z.ZodBoolean>;
}

