/**
 * The real-world corpus side by side (tests/testdata/nginx_conf/corpus,
 * README there): for each file in `PASSING`, `nginx -t` and `--check` agree,
 * and nginx 1.22 and the gateway, each from its own copy of the file, give
 * the same statuses, client-visible fields, upstream requests and log lines
 * on the same probes (`scripts/corpus_report.ts` runs every file). The
 * harness is checked against itself: nginx beside nginx must differ in
 * nothing, so a difference reported for the gateway is the gateway's.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { buildAhead, compareFile, TESTDATA } from "./_corpus/mod.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

/**
 * Corpus files that run with zero edits and behave as nginx, one of each
 * kind (stock Windows file, RuoYi, a Vite SPA, regex locations, CORS `if`,
 * SSE and WebSocket, `rewrite … break` with two upstreams, Debian's
 * default site), so none can regress; `scripts/corpus_report.ts` runs them
 * all (30 of 32 behave as nginx).
 */
const PASSING: string[] = [
  "stock_port",
  "ruoyi_cloud",
  "vite_dist",
  "regex_services",
  "cors_options",
  "agent_sse",
  "rewrite_upstream_pair",
  "debian_default",
];

/**
 * nginx for Windows' stock nginx.conf, its listen and upstream made
 * placeholders, after `own` lines.
 */
function stockCase(own = ""): string {
  return `${own}${Deno.readTextFileSync(join(TESTDATA, "stock/nginx.conf"))}`
    .replace("listen       80;", "listen       {{LISTEN}};")
    .replace("127.0.0.1:8080", "{{UPSTREAM}}");
}

/** The stock file as a case folder, removed when the file unloads. */
const STOCK = Deno.makeTempDirSync({ prefix: "corpus-case-" });
Deno.writeTextFileSync(join(STOCK, "nginx.conf"), stockCase());
globalThis.addEventListener("unload", () => {
  Deno.removeSync(STOCK, { recursive: true });
});

// The gateway's stations of these files are built now, so their folders
// have settled when the tests run.
if (!ON_LINUX.ignore) {
  buildAhead([
    ...PASSING.map((name) => join(TESTDATA, "corpus", name)),
    STOCK,
  ]);
}

for (const name of PASSING) {
  Deno.test(
    `corpus ${name}: nginx and the gateway behave alike from the same file`,
    ON_LINUX,
    async () => {
      const row = await compareFile(join(TESTDATA, "corpus", name));
      deepStrictEqual(
        { agree: row.verdictsAgree, runs: row.runs, differences: row.all },
        { agree: true, runs: true, differences: [] },
        row.first,
      );
    },
  );
}

/**
 * The harness beside itself, on files that exercise every kind of probe:
 * WebSocket and several upstreams (sky-style), alias and a regex location,
 * several servers and named locations, includes and `if`.
 */
const SELF_CHECK = [
  "agent_sse",
  "docker_ws_health",
  "named_servers",
  "ruoyi_alias_login",
];

for (const name of SELF_CHECK) {
  Deno.test(
    `corpus harness: nginx beside nginx differs in nothing on ${name}`,
    ON_LINUX,
    async () => {
      const row = await compareFile(join(TESTDATA, "corpus", name), {
        against: "nginx",
      });
      deepStrictEqual(
        {
          agree: row.verdictsAgree,
          runs: row.runs,
          differences: row.all,
          // Every probe was answered (no deadline, no refused connection).
          unanswered: row.nginxAnswers.filter((a) => / ---/.test(a)),
        },
        { agree: true, runs: true, differences: [], unanswered: [] },
      );
    },
  );
}

/**
 * The harness's gateway side, on the file the gateway runs today (nginx for
 * Windows' stock nginx.conf with `location /api/ { proxy_pass …/; }`, its
 * listen and upstream made placeholders): both accept it, both run, and
 * every probe is answered by both. Which differences remain is the report's
 * business, not this test's.
 */
Deno.test(
  "corpus harness: the gateway runs the stock station file beside nginx",
  ON_LINUX,
  async () => {
    const row = await compareFile(STOCK);
    deepStrictEqual(
      { agree: row.verdictsAgree, runs: row.runs },
      { agree: true, runs: true },
      row.first,
    );
    // Each side answered each probe (`---`: no HTTP answer), and a
    // proxied probe reached the upstream.
    deepStrictEqual(
      [
        ...row.nginxAnswers.filter((a) => /: ---/.test(a)),
        ...row.all.filter((d) => /status .*---/.test(d)),
      ],
      [],
    );
    strictEqual(row.nginxAnswers.length, row.probes);
    strictEqual(
      row.nginxAnswers.some((a) => a.includes("→ upstream 1: POST /")),
      true,
    );
  },
);

/**
 * A file that sets a main-level directive the harness gives nginx through
 * `-g` (`daemon off;` in a station file, nginx for Windows'
 * `master_process off;`, its own `pid`): nginx refuses a main-level
 * directive given twice ("is duplicate", ngx_conf_handler), so the harness
 * leaves that one out of `-g`, and nginx runs the file as written.
 */
for (
  const own of [
    "daemon  off;",
    "master_process  off;",
    "pid  logs/own.pid;",
    "daemon off;\nmaster_process  off;\npid  logs/own.pid;",
  ]
) {
  Deno.test(
    `corpus harness: a file's own ${
      JSON.stringify(own)
    } stands beside nginx's -g`,
    ON_LINUX,
    async () => {
      const dir = await Deno.makeTempDir({ prefix: "corpus-case-" });
      try {
        await Deno.writeTextFile(
          join(dir, "nginx.conf"),
          stockCase(`${own}\n`),
        );
        const row = await compareFile(dir, { against: "nginx" });
        deepStrictEqual(
          { agree: row.verdictsAgree, runs: row.runs, differences: row.all },
          { agree: true, runs: true, differences: [] },
          row.first,
        );
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
}
