/**
 * Runs a share of the suite's test files in one worker. `deno task test`
 * gives `deno test` the `shard_*.ts` files beside this one instead of every
 * `*_test.ts`: each test module gets a worker of its own, and a worker costs
 * about 0.15 s of CPU before its first test (Deno 2.9's test runner fills an
 * 80 MB array for `Deno.bench` in each, and each loads and compiles the
 * gateway's modules again), about 25 s for 170 files. The test files stay as
 * they are, one per module of src/, and run alone as before
 * (`deno test tests/x_test.ts`).
 *
 * Every `*_test.ts` under tests/ is found when the shard starts, so a new
 * file runs without being listed; file `i` of the sorted list goes to shard
 * `i % count`, where `count` is the number of `shard_*.ts` files here.
 *
 * @module
 */

const TESTS = new URL("../", import.meta.url);
/** Not test files of the suite: the browser driver has its own config. */
const SKIPPED = ["browser_driver/", "testdata/", "_shards/"];

async function testFiles(dir: URL, into: string[]): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    const path = url.href.slice(TESTS.href.length);
    if (SKIPPED.some((prefix) => path.startsWith(prefix))) continue;
    if (entry.isDirectory) await testFiles(url, into);
    else if (entry.name.endsWith("_test.ts")) into.push(url.href);
  }
}

/**
 * Imports this shard's test files, which registers their tests in this
 * module's worker.
 *
 * @param index The shard's number, from its file name.
 */
export async function runShard(index: number): Promise<void> {
  const here = await Array.fromAsync(
    Deno.readDir(new URL("./", import.meta.url)),
  );
  const shards = here.filter((e) => /^shard_\d+\.ts$/.test(e.name)).length;
  const files: string[] = [];
  await testFiles(TESTS, files);
  files.sort();
  for (const [i, file] of files.entries()) {
    // A specifier computed at run time: `deno test` type-checks the files
    // when run on their own, and `deno task check` checks them all.
    if (i % shards !== index) continue;
    try {
      await import(file);
    } catch (error) {
      // A file that cannot load fails by its name, and the shard's other
      // files still run.
      Deno.test(`${file.slice(TESTS.href.length)} loads`, () => {
        throw error;
      });
    }
  }
}
