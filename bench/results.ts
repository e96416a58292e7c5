import { round } from "./stats.js";

/** One figure of the table: sitediag's value, blackbox's where it has an equivalent, and their ratio. */
export interface Figure {
  readonly scenario: number;
  readonly name: string;
  readonly unit: string;
  readonly sitediag: number;
  readonly blackbox: number | null;
  /** What the figure is compared against (a goal), shown beside it. */
  readonly goal?: string;
  /** The same work done by Node alone (the node:tls floor of scenario 11), where the scenario measures one. */
  readonly floor?: number;
  /** Per-round values, kept in latest.json for whoever doubts a median. */
  readonly rounds?: { readonly sitediag: readonly number[]; readonly blackbox: readonly number[]; readonly floor?: readonly number[] };
}

export function ratio(figure: Figure): number | null {
  if (figure.blackbox === null || figure.blackbox === 0 || !Number.isFinite(figure.blackbox)) return null;
  return figure.sitediag / figure.blackbox;
}

/** The table printed at the end of a run, in fixed-width columns; the floor's two columns only when a figure has a floor. */
export function renderTable(figures: readonly Figure[]): string {
  const floors = figures.some((figure) => figure.floor !== undefined);
  const header = ["#", "figure", "sitediag", "blackbox", "sitediag/blackbox", ...(floors ? ["node floor", "floor/blackbox"] : []), "goal"];
  const rows = figures.map((figure) => {
    const r = ratio(figure);
    const floor = figure.floor;
    const floorRatio = floor === undefined || figure.blackbox === null || figure.blackbox === 0 ? null : floor / figure.blackbox;
    return [
      String(figure.scenario),
      figure.name,
      show(figure.sitediag, figure.unit),
      figure.blackbox === null ? "-" : show(figure.blackbox, figure.unit),
      r === null ? "-" : `${round(r, 2)}x`,
      ...(floors ? [floor === undefined ? "-" : show(floor, figure.unit), floorRatio === null ? "-" : `${round(floorRatio, 2)}x`] : []),
      figure.goal ?? "",
    ];
  });
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((cells) => (cells[column] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join(" | ")
      .trimEnd();
  return [line(header), widths.map((width) => "-".repeat(width)).join("-|-"), ...rows.map(line)].join("\n");
}

function show(value: number, unit: string): string {
  if (!Number.isFinite(value)) return "n/a";
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${round(value, digits)}${unit === "" ? "" : ` ${unit}`}`;
}
