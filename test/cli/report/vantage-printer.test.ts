import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  SiteStatus,
  VantageDifferenceSchema,
  VantageSiteCheckSchema,
  VantagesAskedSchema,
  VantageState,
  VantageVerdict,
} from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { createPaint } from "../../../src/cli/report/terminal-text.js";
import { startVantagePrinter } from "../../../src/cli/report/vantage-printer.js";
import { waitingLine } from "../../../src/cli/report/vantage-report.js";

// The rows of `--vantages` as they arrive, printed into a buffer that is a
// pipe or a terminal, with a clock the test moves.

const ASKED = create(VantagesAskedSchema, {
  vantages: [{ name: "ap-south" }, { name: "eu-west" }, { name: "us-east" }],
  deadlineMs: 32_000,
});

function down(reason: string) {
  return create(VantageSiteCheckSchema, {
    vantage: { name: "ap-south", state: VantageState.DONE, elapsedMs: 3 },
    data: { requestedUrl: "http://a.test/", status: SiteStatus.DOWN, statusCode: 503, responseTime: 3, reason },
  });
}

const UP = create(VantageSiteCheckSchema, {
  vantage: { name: "eu-west", state: VantageState.DONE, elapsedMs: 2 },
  data: { requestedUrl: "http://a.test/", status: SiteStatus.UP, statusCode: 200, responseTime: 2 },
});

const LATE = create(VantageSiteCheckSchema, {
  vantage: {
    name: "us-east",
    state: VantageState.UNAVAILABLE,
    elapsedMs: 32_000,
    code: "deadline",
    reason: "This vantage did not answer by the deadline",
  },
});

const DIFFERENCES = [
  create(VantageDifferenceSchema, {
    aspect: "status",
    values: [
      { value: "503", vantages: ["ap-south"] },
      { value: "200", vantages: ["eu-west"] },
    ],
  }),
];

function buffer(isTTY: boolean) {
  const chunks: string[] = [];
  return { isTTY, chunks, write: (text: string) => chunks.push(text), text: () => chunks.join("") };
}

describe("the rows of --vantages as they arrive", () => {
  it("on a pipe: the heading with the first row, a line per row when it comes, then what differs and the verdict; no control sequence", () => {
    const out = buffer(false);
    const printer = startVantagePrinter(out, createPaint(false));
    printer.asked(ASKED);
    expect(out.text()).toBe("");
    printer.entry(UP);
    expect(out.text().split("\n")).toEqual([
      expect.stringMatching(/^VANTAGE\s+STATE\s+ANSWER\s+STATUS\s+TIME\s+CODE\s+REASON$/),
      "eu-west   done         UP          200     2 ms",
      "",
    ]);
    printer.entry(down("Server returned 503"));
    printer.entry(LATE);
    printer.end("http://a.test/", VantageVerdict.DOWN_IN_SOME, DIFFERENCES);
    printer.stop();
    const lines = out.text().trimEnd().split("\n");
    expect(lines.slice(1, 4).map((line) => line.split(/\s+/)[0])).toEqual(["eu-west", "ap-south", "us-east"]);
    expect(lines[2]).toMatch(/^ap-south\s+done\s+DOWN\s+503\s+3 ms\s+Server returned 503$/);
    expect(lines[3]).toMatch(/^us-east\s+unavailable\s+-\s+-\s+32000 ms\s+deadline\s+This vantage did not answer by the deadline$/);
    expect(lines[4]).toBe("differs: status (ap-south 503; eu-west 200)");
    // Counted in the order of the names, as the answer lists them, whatever order they came in.
    expect(lines[5]).toBe("down_in_some  http://a.test/  (3 vantages: 2 done, 1 unavailable; not seen from us-east)");
    expect(out.text().includes("\u001b") || out.text().includes("\r")).toBe(false);
  });

  it("on a terminal: a waiting line below the rows names those still out, seconds against the deadline, erased before each row and at the end", () => {
    const out = buffer(true);
    let now = 0;
    const printer = startVantagePrinter(out, createPaint(false), () => now);
    printer.asked(ASKED);
    expect(out.text()).toBe("waiting for: ap-south, eu-west, us-east (0 s of 32 s)");
    now = 1_200;
    printer.entry(UP);
    const afterRow = out.text();
    const [waited, rest] = afterRow.split("\r\u001b[2K");
    expect(waited).toBe("waiting for: ap-south, eu-west, us-east (0 s of 32 s)");
    expect(rest).toMatch(/^VANTAGE.*\neu-west .*\nwaiting for: ap-south, us-east \(1 s of 32 s\)$/);
    printer.end("http://a.test/", VantageVerdict.UP_WHERE_ANSWERED, []);
    printer.stop();
    // The waiting line goes before the ending; the ending has no clock in it.
    expect(out.text().slice(afterRow.length)).toBe("\r\u001b[2Kup_where_answered  http://a.test/  (1 vantage: 1 done)\n");
  });

  it("shows a control character a target's words carry as its escape, never as itself", () => {
    const out = buffer(false);
    const printer = startVantagePrinter(out, createPaint(false));
    printer.asked(ASKED);
    printer.entry(down("Server returned 503 \u001b[2Jgone\u0007"));
    printer.end("http://a.test/\u001b]0;x", VantageVerdict.DOWN_WHERE_ANSWERED, []);
    const text = out.text();
    expect(text.includes("\u001b") || text.includes("\u0007")).toBe(false);
    expect(text).toContain("Server returned 503 \\x1b[2Jgone\\x07");
    expect(text).toContain("http://a.test/\\x1b]0;x");
  });

  it("nothing asked: nothing printed (the command says so on stderr)", () => {
    const out = buffer(true);
    const printer = startVantagePrinter(out, createPaint(false));
    printer.asked(create(VantagesAskedSchema, { vantages: [], deadlineMs: 32_000 }));
    printer.end("http://a.test/", VantageVerdict.UNAVAILABLE, []);
    expect(out.text()).toBe("");
  });
});

describe("the waiting line", () => {
  it("is cut to the terminal's width, so erasing it leaves nothing behind", () => {
    const many = Array.from({ length: 12 }, (_, index) => `region-number-${index}`);
    const line = waitingLine(many, "3 s of 32 s", 59, createPaint(false));
    expect(line).toHaveLength(59);
    expect(line).toMatch(/^waiting 3 s of 32 s for 12 vantages: region-number-0, .*…$/);
    expect(waitingLine(["ap-south"], "3 s of 32 s", 59, createPaint(false))).toBe("waiting for: ap-south (3 s of 32 s)");
  });
});

describe("a terminal that reports no width", () => {
  it("is taken as 80 wide (a pty nobody sized says 0)", () => {
    const out = Object.assign(buffer(true), { columns: 0 });
    startVantagePrinter(out, createPaint(false), () => 0).asked(ASKED);
    expect(out.text()).toBe("waiting for: ap-south, eu-west, us-east (0 s of 32 s)");
  });
});
