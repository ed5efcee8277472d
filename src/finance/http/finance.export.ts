import ExcelJS from 'exceljs';
import type { Writable } from 'node:stream';
import type { ExportCostLine, ExportRow, FigureTexts } from '../finance.service';
import { minorUnit } from '../rules/money';
import { FIGURES as FIGURE_MODEL } from '../rules/figures';
import { nextTurn } from '../../turns';

/*
 * The project list as a file: every listed task at every level (depth first, with its level and its
 * parent's name), the list's figures, and a totals row equal to the list's body.totals (the sum of
 * the starting level's rows: summing every row of a column would count subtasks twice).
 */

type Figures = FigureTexts;

/** Figures are exact decimal text, as the project list writes them. */
export type ExportTree = {
  project: { id: string; name: string; currency: string };
  /** The task whose subtasks are exported (parent_task_id): the starting level's parent. */
  parent: { id: string; name: string } | null;
  rows: { depth: number; row: ExportRow }[];
  totals: Figures;
};

/** What an export sends: its type and file name, and a writer that streams the file to `out`. */
export type ExportFile = { contentType: string; fileName: string; write: (out: Writable) => Promise<void> };

const FIGURES: { key: keyof Figures; header: string; money: boolean; flag: boolean }[] = FIGURE_MODEL.map((figure) => ({
  key: figure.name,
  header: figure.header,
  money: figure.unit === 'money',
  flag: figure.unit === 'flag',
}));

/** A figure's cell as CSV text: exact decimals, a flag (a count of tasks) as yes or no. */
const csvFigure = (figure: (typeof FIGURES)[number], text: string) => (figure.flag ? (Number(text) > 0 ? 'yes' : 'no') : text);

/** A figure's XLSX cell: a number, a flag as yes or no. */
const xlsxFigure = (figure: (typeof FIGURES)[number], text: string) => (figure.flag ? (Number(text) > 0 ? 'yes' : 'no') : Number(text));
const TEXT_HEADERS = ['Task', 'Task id', 'Level', 'Parent task', 'Status', 'Priority', 'Phase', 'Billable'];

function fileName(projectName: string, extension: string, what = 'finance'): string {
  const slug = projectName.normalize('NFKD').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'project';
  return `${slug}-${what}-${new Date().toISOString().slice(0, 10)}.${extension}`;
}

/** The cost-lines sheet: each exported task's own cost lines per member (docs/finance-rules.md R15.3). */
const LINE_TEXTS = ['Task', 'Task id', 'Member', 'Member id', 'Job role'] as const;
type LineFigure = { key: 'hourly_rate' | 'bill_rate' | 'logged_hours' | 'actual_cost' | 'actual_revenue'; header: string; money: boolean };
const LINE_FIGURES: LineFigure[] = [
  { key: 'hourly_rate', header: 'Hourly rate', money: true },
  { key: 'logged_hours', header: 'Logged hours', money: false },
  { key: 'actual_cost', header: 'Actual cost', money: true },
];
const LINE_DAYS = ['First day', 'Last day'] as const;
/** Added after the days (docs/finance-rules.md R22, R23), so the earlier columns keep their places. */
const LINE_REVENUE: LineFigure[] = [
  { key: 'bill_rate', header: 'Bill rate', money: true },
  { key: 'actual_revenue', header: 'Actual revenue', money: true },
];
const lineTexts = (line: ExportCostLine) => [line.task_name, line.task_id, line.member_name, line.team_member_id, line.job_role];

/**
 * The text columns of a row (parents' names looked up in one map for the whole tree), computed row by
 * row as the file is written: for every row at once, a 10,000-task export's would be one long stretch.
 */
function textColumns(tree: ExportTree): (entry: ExportTree['rows'][number]) => (string | number)[] {
  const names = new Map(tree.rows.map(({ row }) => [row.id, row.name]));
  if (tree.parent) names.set(tree.parent.id, tree.parent.name);
  return ({ depth, row }) => [
    row.name,
    row.id,
    depth,
    (row.parent_task_id && names.get(row.parent_task_id)) ?? '',
    row.status ?? '',
    row.priority ?? '',
    row.phase ?? '',
    row.billable ? 'yes' : 'no',
  ];
}

/** A text cell starting like a formula gets a leading quote, so a spreadsheet shows it instead of running it. */
function defused(value: string | number): string {
  return typeof value === 'string' && /^[=+\-@\t\r]/.test(value) ? `'${value}` : String(value);
}

/** RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled; lines end in CRLF. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/*
 * Files are written row by row into the response, a batch at a time, yielding to the event loop between
 * batches and waiting while the client is slow to read: a 10,000-task export neither holds the whole
 * file in memory nor keeps other requests (or /healthz) waiting behind it.
 */
const ROWS_PER_BATCH = 250;
/** exceljs spends about ten times as long on a row as the CSV writer: shorter turns on the loop. */
const XLSX_ROWS_PER_BATCH = 10;

class ClientGone extends Error {
  constructor() {
    super('the client went away during an export');
  }
}

/** Writes text, then waits until the client has taken it in (or is gone, which ends the export). */
async function send(out: Writable, text: string): Promise<void> {
  if (out.destroyed) throw new ClientGone();
  if (!out.write(text)) await drained(out);
}

/**
 * Waits while `out` holds more than it should (the client is slow to read), and ends the export when
 * the client is gone: a client that stops reading stops the export, and when it is cut off
 * (http/stalled-clients.ts) the export ends there instead of running on into memory.
 */
async function drained(out: Writable): Promise<void> {
  if (out.destroyed) throw new ClientGone();
  if (!out.writableNeedDrain) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
  if (out.destroyed) throw new ClientGone();
}

export function toCsv(tree: ExportTree): ExportFile {
  const line = (fields: string[]) => fields.map(csvField).join(',') + '\r\n';
  const header = [...TEXT_HEADERS, ...FIGURES.map((f) => `${f.header}${f.money ? ` (${tree.project.currency})` : ''}`)];
  // Figures are written as exact decimals; only text cells are defused (a negative variance stays a number).
  const texts = textColumns(tree);
  const write = async (out: Writable) => {
    await send(out, line(header));
    for (let start = 0; start < tree.rows.length; start += ROWS_PER_BATCH) {
      let batch = '';
      for (let i = start; i < Math.min(start + ROWS_PER_BATCH, tree.rows.length); i++) {
        const entry = tree.rows[i] as ExportTree['rows'][number];
        batch += line([...texts(entry).map(defused), ...FIGURES.map((f) => csvFigure(f, entry.row[f.key]))]);
      }
      await send(out, batch);
      await nextTurn();
    }
    await send(out, line(['Total', '', '', '', '', '', '', '', ...FIGURES.map((f) => csvFigure(f, tree.totals[f.key]))]));
    out.end();
  };
  return { contentType: 'text/csv; charset=utf-8; header=present', fileName: fileName(tree.project.name, 'csv'), write };
}

export function toCostLinesCsv(tree: Pick<ExportTree, 'project'>, lines: readonly ExportCostLine[]): ExportFile {
  const line = (fields: string[]) => fields.map(csvField).join(',') + '\r\n';
  const header = [
    ...LINE_TEXTS,
    ...LINE_FIGURES.map((f) => `${f.header}${f.money ? ` (${tree.project.currency})` : ''}`),
    ...LINE_DAYS,
    ...LINE_REVENUE.map((f) => `${f.header} (${tree.project.currency})`),
  ];
  const write = async (out: Writable) => {
    await send(out, line(header));
    for (let start = 0; start < lines.length; start += ROWS_PER_BATCH) {
      let batch = '';
      for (const entry of lines.slice(start, start + ROWS_PER_BATCH)) {
        batch += line([...lineTexts(entry).map(defused), ...LINE_FIGURES.map((f) => entry[f.key]), entry.first_day, entry.last_day, ...LINE_REVENUE.map((f) => entry[f.key])]);
      }
      await send(out, batch);
      await nextTurn();
    }
    out.end();
  };
  return { contentType: 'text/csv; charset=utf-8; header=present', fileName: fileName(tree.project.name, 'csv', 'cost-lines'), write };
}

/** The XLSX file; with `lines` (sheet=cost_lines, even none), a second sheet of cost lines. */
export function toXlsx(tree: ExportTree, lines?: readonly ExportCostLine[]): ExportFile {
  const withLines = lines !== undefined;
  const write = async (out: Writable) => {
    // exceljs's streaming writer: committed rows go to the zip stream and are not kept.
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
    const sheet = workbook.addWorksheet('Finance', { views: [{ state: 'frozen', ySplit: 1 }] });
    const decimals = minorUnit(tree.project.currency);
    const amount = `#,##0${decimals ? `.${'0'.repeat(decimals)}` : ''} "${tree.project.currency}"`;
    const moneyFormat = `${amount};-${amount}`;
    sheet.columns = [
      ...TEXT_HEADERS.map((header) => ({ header, width: header === 'Task' ? 40 : header === 'Task id' ? 38 : 14 })),
      ...FIGURES.map((f) => ({ header: f.header, width: 20, style: f.flag ? {} : { numFmt: f.money ? moneyFormat : '#,##0.00' } })),
    ];
    sheet.getRow(1).font = { bold: true };
    sheet.getRow(1).commit();
    // Spreadsheet cells are binary floating point: the nearest double to the exact decimal (xlsxFigure).
    const texts = textColumns(tree);
    for (let i = 0; i < tree.rows.length; i++) {
      const entry = tree.rows[i] as ExportTree['rows'][number];
      const row = sheet.addRow([...texts(entry), ...FIGURES.map((f) => xlsxFigure(f, entry.row[f.key]))]);
      row.getCell(1).alignment = { indent: Math.min(entry.depth, 15) };
      row.commit();
      if (i % XLSX_ROWS_PER_BATCH === XLSX_ROWS_PER_BATCH - 1) {
        // exceljs's zip stream is piped into `out`: rows committed while the client does not read would pile up here.
        await drained(out);
        await nextTurn();
      }
    }
    const total = sheet.addRow(['Total', '', '', '', '', '', '', '', ...FIGURES.map((f) => xlsxFigure(f, tree.totals[f.key]))]);
    total.font = { bold: true };
    total.commit();
    await sheet.commit();
    // With sheet=cost_lines, a second sheet: every exported task's own cost lines, numbers as numbers.
    if (withLines) await writeCostLines(workbook, lines, moneyFormat, out);
    await workbook.commit();
  };
  return { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', fileName: fileName(tree.project.name, 'xlsx'), write };
}

/** The cost-lines sheet of an XLSX file, streamed like the first. */
async function writeCostLines(
  workbook: ExcelJS.stream.xlsx.WorkbookWriter,
  lines: readonly ExportCostLine[],
  moneyFormat: string,
  out: Writable,
): Promise<void> {
  const number = (value: string) => Number(value);
  const costs = workbook.addWorksheet('Cost lines', { views: [{ state: 'frozen', ySplit: 1 }] });
  costs.columns = [
    ...LINE_TEXTS.map((header) => ({ header, width: header === 'Task' || header === 'Member' ? 32 : header.endsWith('id') ? 38 : 20 })),
    ...LINE_FIGURES.map((f) => ({ header: f.header, width: 16, style: { numFmt: f.money ? moneyFormat : '#,##0.00' } })),
    ...LINE_DAYS.map((header) => ({ header, width: 12 })),
    ...LINE_REVENUE.map((f) => ({ header: f.header, width: 16, style: { numFmt: moneyFormat } })),
  ];
  costs.getRow(1).font = { bold: true };
  costs.getRow(1).commit();
  for (let i = 0; i < lines.length; i++) {
    const entry = lines[i] as ExportCostLine;
    costs.addRow([...lineTexts(entry), ...LINE_FIGURES.map((f) => number(entry[f.key])), entry.first_day, entry.last_day, ...LINE_REVENUE.map((f) => number(entry[f.key]))]).commit();
    if (i % XLSX_ROWS_PER_BATCH === XLSX_ROWS_PER_BATCH - 1) {
      await drained(out);
      await nextTurn();
    }
  }
  await costs.commit();
}
