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
 * file runs without being listed. The files are packed longest first
 * ({@linkcode packShards}): each goes to the shard with the least time so
 * far, by the seconds in {@linkcode FILE_SECONDS} (a file not listed counts
 * one), so the shards take about as long as each other and the last one
 * running does not hold the suite up alone. There are six shards, one for
 * each of `deno task test`'s six slots (`DENO_JOBS=6`): all start at once,
 * none waits for a slot and then runs on alone, and the gateway's modules
 * load in six workers, not more.
 *
 * @module
 */

/**
 * What each of the longer test files costs a shard, in seconds: its wall
 * time plus twice its CPU time (user + system), each alone in its own
 * `deno test` process (the loop in tests/README.md, **Speed**), less that
 * process's own start (0.3 s of each). Six shards share two cores, so a
 * second of CPU in the suite takes about three of a shard's wall time, a
 * second of waiting (nginx's whole seconds, a browser, a settling folder)
 * one. All of them are timed in one run of the loop, on one host at one
 * load (a file's cost grows with the load, a race's most): refresh them
 * together when a file grows or shrinks a lot. A file not listed counts
 * one, so a new file is listed with its own cost, below one too (a file
 * of table tests costs about a tenth).
 */
export const FILE_SECONDS: Readonly<Record<string, number>> = {
  "proxy/websocket_tunnel_test.ts": 17.4,
  "browser_test.ts": 17.1,
  "static_race_sidecar_test.ts": 12.3,
  "upstream_failures_test.ts": 9.7,
  "static_race_folder_test.ts": 9.4,
  "main_test.ts": 8.8,
  "nginx_compat_test.ts": 8.8,
  "nginx_conf/corpus_side_by_side_test.ts": 8.6,
  "nginx_conf/hostile_conf_test.ts": 8.2,
  "hardening_test.ts": 7.7,
  "doc_examples_test.ts": 7.5,
  "access/auth_storm_test.ts": 7.4,
  "streaming_test.ts": 7.1,
  "static_race_test.ts": 7,
  "upstream/ip_hash_nginx_test.ts": 6,
  "ssi/ssi_gateway_test.ts": 4.5,
  "log/error_logs_gateway_test.ts": 4.2,
  "server/config_load_test.ts": 4.1,
  "compile_hints_test.ts": 4,
  "ssi/ssi_nginx_test.ts": 3.9,
  "response/expires_after_wait_test.ts": 3.8,
  "static/settled_proof_test.ts": 3.8,
  "windows_lane_test.ts": 3.8,
  "engine/regex_nginx_test.ts": 3.7,
  "fastcgi/fastcgi_nginx_test.ts": 3.7,
  "static/built_in_static_test.ts": 3.6,
  "tls_start_test.ts": 3.6,
  "upstream/peer_choice_nginx_test.ts": 3.5,
  "nginx_conf/corpus_processes_test.ts": 3.4,
  "nginx_conf/corpus_test.ts": 3.4,
  "proxy/body_file_retry_test.ts": 3.2,
  "tls_test.ts": 3.2,
  "static/serve_file_nginx_test.ts": 3.1,
  "hostile_listener_test.ts": 2.9,
  "limits/limit_storm_test.ts": 2.8,
  "nginx_compat_request_test.ts": 2.8,
  "static/default_page_test.ts": 2.7,
  "nginx_conf/compat_test.ts": 2.6,
  "proxy/accel_body_nginx_test.ts": 2.6,
  "upstream/balance_methods_nginx_test.ts": 2.6,
  "access/user_file_cache_test.ts": 2.5,
  "response/gzip_nginx_test.ts": 2.5,
  "static/error_page_test.ts": 2.5,
  "ssi/ssi_corpus_test.ts": 2.4,
  "upstream_reuse_test.ts": 2.4,
  "static/containment_witness_test.ts": 2.1,
  "tls_one_write_test.ts": 2.1,
  "closing_statuses_nginx_test.ts": 1.9,
  "proxy/websocket_close_test.ts": 1.9,
  "static/serve_file_test.ts": 1.9,
  "log/nginx_engine_vars_test.ts": 1.7,
  "routing/first_lines_nginx_test.ts": 1.7,
  "error_page_body_nginx_test.ts": 1.6,
  "response/add_header_length_nginx_test.ts": 1.6,
  "closing_connections_tls_test.ts": 1.5,
  "nginx_conf/proxy_pass_host_variables_test.ts": 1.5,
  "nginx_conf/proxy_pass_variables_test.ts": 1.5,
  "request/kept_upstream_nginx_test.ts": 1.5,
  "server/shutdown_upload_test.ts": 1.5,
  "index_methods_test.ts": 1.4,
  "limits/limits_gateway_test.ts": 1.4,
  "log/bytes_sent_nginx_test.ts": 1.4,
  "request/body_length_nginx_test.ts": 1.4,
  "request/streamed_body_redirect_nginx_test.ts": 1.4,
  "ssi/ssi_include_phases_nginx_test.ts": 1.4,
  "proxy/request_buffer_test.ts": 1.3,
  "log/nginx_upstream_vars_test.ts": 1.2,
  "nginx_conf/compile_geo_test.ts": 1.2,
  "proxy/client_left_body_nginx_test.ts": 1.2,
  "proxy/websocket_frames_test.ts": 1.2,
  "request/forbidden_method_nginx_test.ts": 1.2,
  "request/request_flow_test.ts": 1.2,
  "ssi/ssi_include_upgrade_nginx_test.ts": 1.2,
  "ssi/ssi_lines_nginx_test.ts": 1.2,
  "access/access_gateway_test.ts": 1.1,
  "windows/task_command_test.ts": 1.1,
  "proxy/websocket_lines_nginx_test.ts": 1,
  "request/error_page_fields_nginx_test.ts": 0.9,
  "routing/content_length_nginx_test.ts": 0.9,
  "access/password_checker_test.ts": 0.8,
  "nginx_conf/cli_test.ts": 0.8,
  "proxy/body_preread_nginx_test.ts": 0.8,
  "upstream/exchange_end_test.ts": 0.7,
  "limits/nginx_limits_test.ts": 0.5,
  "log/access_logs_gateway_test.ts": 0.5,
  "static/cache_test.ts": 0.5,
  "log/sent_head_test.ts": 0.2,
  "nginx_conf/corpus_run_tag_test.ts": 0.1,
  "nginx_conf/types_blocks_test.ts": 0.1,
  "response/headers_filter_test.ts": 0.1,
  "routing/header_buffers_test.ts": 0.1,
  "routing/request_checks_test.ts": 0.1,
  "runtime/field_lines_test.ts": 0.1,
  "static/containment_test.ts": 0.1,
  "upstream/http1_test.ts": 0.1,
  "upstream/response_framing_test.ts": 0.1,
};

/**
 * Packs `files` into `count` shards, longest first, each into the shard
 * with the least seconds so far (the lowest-numbered on a tie).
 *
 * @param files Test file paths relative to tests/.
 * @param count The number of shards.
 * @param seconds Each file's time; a file not listed counts one.
 * @returns The files of each shard.
 *
 * @example Usage
 * ```ts
 * import { packShards } from "./shard.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(
 *   packShards(["a_test.ts", "b_test.ts", "c_test.ts"], 2, {
 *     "b_test.ts": 3,
 *   }),
 *   [["b_test.ts"], ["a_test.ts", "c_test.ts"]],
 * );
 * ```
 */
export function packShards(
  files: readonly string[],
  count: number,
  seconds: Readonly<Record<string, number>> = FILE_SECONDS,
): string[][] {
  const cost = (file: string) => seconds[file] ?? 1;
  const longestFirst = [...files].sort((a, b) =>
    cost(b) - cost(a) || (a < b ? -1 : a > b ? 1 : 0)
  );
  const shards = Array.from({ length: count }, () => [] as string[]);
  const totals = shards.map(() => 0);
  for (const file of longestFirst) {
    const least = totals.indexOf(Math.min(...totals));
    shards[least]!.push(file);
    totals[least]! += cost(file);
  }
  return shards;
}

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

/** Which shard of how many runs in this worker (read by `freePort()`). */
export interface ShardPlace {
  /** From 0. */
  index: number;
  /** Shards in the run. */
  count: number;
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
  const names = files.map((file) => file.slice(TESTS.href.length));
  // freePort() draws from this shard's own share of its range, so two
  // shards of one run never check the same port and then both bind it.
  (globalThis as { stationGatewayShard?: ShardPlace }).stationGatewayShard = {
    index,
    count: shards,
  };
  for (const name of packShards(names, shards)[index] ?? []) {
    // A specifier computed at run time: `deno test` type-checks the files
    // when run on their own, and `deno task check` checks them all.
    const file = new URL(name, TESTS).href;
    try {
      await import(file);
    } catch (error) {
      // A file that cannot load fails by its name, and the shard's other
      // files still run.
      Deno.test(`${name} loads`, () => {
        throw error;
      });
    }
  }
}
