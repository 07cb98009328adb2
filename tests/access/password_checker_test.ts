import { strictEqual } from "node:assert/strict";
import { PasswordChecker } from "../../src/access/mod.ts";

// bcrypt of "right", cost 4 (16 rounds), made with libxcrypt.
const COST4 = "$2b$04$abcdefghijklmnopqrstuuFmEfrkTQnczNzw475xE2VhDrK1uwJiC";

Deno.test("PasswordChecker: one client's many wrong passwords do not hold back another client", async () => {
  const checker = new PasswordChecker({
    sliceMs: 1,
    maxPendingPerClient: 1000,
    maxPending: 2000,
  });
  const order: string[] = [];
  const attacker: Promise<unknown>[] = [];
  for (let i = 0; i < 50; i++) {
    attacker.push(
      checker.check(COST4, `wrong-${i}`, "10.0.0.66").then((v) => {
        strictEqual(v, "mismatch");
        order.push("attacker");
      }),
    );
  }
  const other = checker.check(COST4, "right", "10.0.0.7").then((v) => {
    strictEqual(v, "match");
    order.push("other");
  });
  await Promise.all([...attacker, other]);
  // Turns alternate by client: the other client's check ends before the
  // attacker's third, however long the attacker's queue.
  const at = order.indexOf("other");
  strictEqual(at >= 0 && at <= 2, true, `other finished at ${at}`);
  strictEqual(checker.pending, 0);
});

Deno.test("PasswordChecker: queues are bounded per client and in all", async () => {
  const checker = new PasswordChecker({
    maxPendingPerClient: 2,
    maxPending: 3,
  });
  const a = [1, 2, 3].map((i) => checker.check(COST4, `w${i}`, "a"));
  const b = [1, 2].map((i) => checker.check(COST4, `w${i}`, "b"));
  const verdicts = await Promise.all([...a, ...b]);
  // a: two wait, the third is refused; b: one fits before the total bound.
  strictEqual(
    verdicts.join(),
    "mismatch,mismatch,busy,mismatch,busy",
  );
});

Deno.test("PasswordChecker: a known result costs no second check", async () => {
  const checker = new PasswordChecker();
  strictEqual(await checker.check(COST4, "right", "a"), "match");
  const again = checker.check(COST4, "right", "b");
  strictEqual(checker.pending, 0);
  strictEqual(await again, "match");
  strictEqual(await checker.check(COST4, "wrong", "a"), "mismatch");
  strictEqual(await checker.check(COST4, "wrong", "a"), "mismatch");
});

Deno.test("PasswordChecker: a request that goes away gives up its turn", async () => {
  const checker = new PasswordChecker({ sliceMs: 1 });
  const first = checker.check(COST4, "x1", "a");
  const controller = new AbortController();
  const second = checker.check(COST4, "x2", "a", controller.signal);
  controller.abort();
  strictEqual(await first, "mismatch");
  strictEqual(await second, "aborted");
  strictEqual(checker.pending, 0);
  strictEqual(
    await checker.check(COST4, "x3", "a", AbortSignal.abort()),
    "aborted",
  );
});
