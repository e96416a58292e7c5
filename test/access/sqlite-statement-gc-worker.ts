// Run as a child process by sqlite-statement-gc.test.ts. It prepares and drops
// many statements while allocating garbage across timer turns, so V8 finishes
// some collections from its own tasks, where no JS context is entered: the
// moment better-sqlite3 12 on Node >= 24.19 aborted the process.
import { Database } from "../../src/access/sqlite-store.js";

const db = new Database(":memory:");
const ROUNDS = 300;
let round = 0;

function churn(): void {
  for (let i = 0; i < 200; i += 1) db.prepare("SELECT ?").get(i);
  const garbage: object[] = [];
  for (let i = 0; i < 20_000; i += 1) garbage.push({ i, text: "x".repeat(50) });
  round += 1;
  if (round < ROUNDS) {
    setTimeout(churn, 1);
    return;
  }
  db.close();
  process.stdout.write(`survived ${ROUNDS} rounds\n`);
}

churn();
