/**
 * A target's bytes never reach a terminal raw. A loopback target answers with
 * obs-text in a header value and in its reason phrase: bytes 0x9B, 0x9D and
 * 0x9C, which a latin1 decoding turns into C1 controls (CSI, OSC, ST) that
 * xterm obeys; plus C0 (ESC, BEL) and DEL where HTTP parsers let them through.
 * Each command runs as its own process writing to a real pipe, as a shell
 * runs it; its output must hold no control character but the line ends, and
 * show what the target sent as escapes. --json keeps the data (a parser reads
 * the same value back) with those characters escaped.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawTarget, startRawTarget } from "../fixtures/raw-targets.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

/** CSI 2J (clear the screen), OSC 0;owned ST (retitle the window), as obs-text bytes. */
const HOSTILE_VALUE = Buffer.from([0x61, 0x9b, 0x32, 0x4a, 0x62, 0x9d, 0x30, 0x3b, 0x6f, 0x77, 0x6e, 0x65, 0x64, 0x9c, 0x63]);
/** The same value as latin1 decodes it, and as the CLI must show it. */
const DECODED = HOSTILE_VALUE.toString("latin1");
const SHOWN = "a\\x9b2Jb\\x9d0;owned\\x9cc";

// Any control character a terminal acts on, but the line feed the report's lines end with.
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function answer(path: string): Buffer {
  const head = (status: string, extra: string) =>
    Buffer.concat([
      Buffer.from(`HTTP/1.1 ${status}`, "latin1"),
      HOSTILE_VALUE,
      Buffer.from(`\r\n${extra}x-evil: `, "latin1"),
      HOSTILE_VALUE,
      Buffer.from("\r\ncontent-length: 0\r\nconnection: close\r\n\r\n", "latin1"),
    ]);
  if (path === "/old") return head("301 Moved ", "location: /page\r\n");
  if (path === "/broken") return head("503 Down ", "");
  return head("200 Fine ", "");
}

let target: RawTarget;
let env: Record<string, string>;

beforeAll(async () => {
  target = await startRawTarget({ kind: "bytes", answer: (path) => answer(path) });
  env = { PATH: process.env.PATH ?? "", SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_TRACE_PORTS: String(target.port), NO_COLOR: "1" };
});

afterAll(async () => {
  await target?.close();
});

const url = (path: string) => `http://127.0.0.1:${target.port}${path}`;

/** Runs `sitediag argv` as a process with `stdin`; its stdout as the bytes a terminal would get, decoded as UTF-8. */
async function sitediag(argv: readonly string[], stdin = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, sitediagArgs(...argv), { env, stdio: ["pipe", "pipe", "pipe"] });
  const out: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, "exit");
  child.stdin.end(stdin);
  const [code] = (await exited) as [number | null];
  return { code, stdout: Buffer.concat(out).toString("utf8"), stderr };
}

// Each test starts one to three processes of the built sitediag: seconds each on a loaded machine.
describe("what a target sent, printed by the CLI", { timeout: 120_000 }, () => {
  it("check --headers: the header value and the reason phrase shown escaped, no control character written", async () => {
    const run = await sitediag(["check", "--headers", url("/")]);
    expect(run.stderr).toBe("");
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toMatch(new RegExp(`^ {4}x-evil: ${escape(SHOWN)}$`, "m"));
    expect(run.stdout).toContain(`200 Fine ${SHOWN}`);
  });

  it("trace --headers: every hop's fields, the redirect's and the final page's, shown escaped", async () => {
    const run = await sitediag(["trace", "--headers", url("/old")]);
    expect(run.stderr).toBe("");
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stdout.match(new RegExp(`^ {4}x-evil: ${escape(SHOWN)}$`, "gm"))?.length).toBeGreaterThanOrEqual(2);
    expect(run.stdout).toContain(`301 Moved ${SHOWN}`);
  });

  it.each([
    ["check", "/"],
    ["trace", "/old"],
  ])("%s --json --details: C1 escaped as \\u009b, and the value a JSON parser reads is the one received", async (command, path) => {
    const run = await sitediag([command, "--json", "--details", url(path)]);
    expect(run.stderr).toBe("");
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain("a\\u009b2Jb\\u009d0;owned\\u009cc");
    const data = JSON.parse(run.stdout) as { details: { requests: { responseHeaders: { name: string; value: string }[] }[] } };
    const values = data.details.requests.flatMap((request) =>
      request.responseHeaders.filter((field) => field.name === "x-evil").map((field) => field.value),
    );
    expect(values.length).toBeGreaterThanOrEqual(1);
    for (const value of values) expect(value).toBe(DECODED);
  });

  it("trace --batch: the table's and the CSV's reasons quote the status text escaped; --json keeps it as data", async () => {
    const rows = `${url("/broken")}\n${url("/old")},${url("/page")}\n`;
    const table = await sitediag(["trace", "--batch", "-"], rows);
    const csv = await sitediag(["trace", "--batch", "-", "--csv"], rows);
    const ndjson = await sitediag(["trace", "--batch", "-", "--json"], rows);
    for (const run of [table, csv, ndjson]) {
      expect(run.stderr).toBe("");
      expect(run.code).toBe(1);
    }
    expect(table.stdout).not.toMatch(RAW_CONTROL);
    expect(table.stdout).toContain(`503 Down ${SHOWN}`);
    // The CSV's rows end in CRLF, as the page's download does.
    expect(csv.stdout.replaceAll("\r\n", "\n")).not.toMatch(RAW_CONTROL);
    expect(csv.stdout).toContain(`503 Down ${SHOWN}`);
    expect(ndjson.stdout).not.toMatch(RAW_CONTROL);
    const lines = ndjson.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { index: number; data?: { chain: { statusText: string }[] } });
    expect(lines.find((line) => line.index === 0)?.data?.chain[0]?.statusText).toBe(`Down ${DECODED}`);
  });

  it("check --vantages local: the vantage row's reason shown escaped", async () => {
    const run = await sitediag(["check", "--vantages", "local", url("/broken")]);
    // The one line on stderr says that on the SQLite store only this machine was asked (issue 38); nothing of the target's.
    expect(run.stderr).toBe(
      'sitediag: --vantages: SITEDIAG_STORE is the SQLite store, so only this machine ("local") was asked; set it to the deployment\'s Redis to ask its regions\n',
    );
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain(SHOWN);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
