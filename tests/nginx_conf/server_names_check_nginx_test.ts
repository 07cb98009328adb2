/**
 * `server_name`s nginx 1.22 refuses beside the gateway's `--check`: a name
 * it reads as invalid (`*`, `*x`, `.`), an empty regex, and, on an address
 * more than one server listens on, a wildcard its name hash does not take
 * (`a*b`, `www.*.com`, `a..b`); a regex name's named capture after a
 * read-only variable. Each file has the name in a second server.
 */
import { deepStrictEqual } from "node:assert/strict";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("nginx_conf/server_names_check_nginx_test.ts", [
  "nginx",
]);

/** [the second server's `server_name` arguments, whether a first server shares its address] */
const ROWS: [string, boolean][] = [
  ["~", true],
  ['"~"', true],
  ["*", true],
  ["*a", true],
  ["*.", true],
  [".", true],
  ["**.a", true],
  ["ok.com *", true],
  ["a*b", true],
  ["A*B", true],
  ["*.a.*", true],
  ["www.*.com", true],
  ["a.b*", true],
  ["a..b", true],
  [".a.", true],
  ["*.a", true],
  ["a.*", true],
  [".a", true],
  ["a.", true],
  ["a*b", false],
  ["www.*.com", false],
  ['"~^(?<host>.+)$"', true],
];

/** nginx's `[emerg]` text without its time, pid and place; `""` for none. */
function emergOf(stderr: string): string {
  return /\[emerg\] (?:\d+#\d+: )?(.*?)(?: in \/\S+:\d+)?$/m.exec(stderr)
    ?.[1] ?? "";
}

/** The gateway's first refusal of a file, without its place; `""` for none. */
function ours(conf: string): string {
  const result = loadNginxConf(conf);
  return result.ok ? "" : result.message.replace(/ in \/\S+?(?::\d+)?$/, "");
}

Deno.test(
  "server names nginx 1.22 refuses, as it reads them and as it hashes an address's names, are refused with its words",
  NEEDS,
  async () => {
    await using p = await nginxPrefix("", {
      name: "server-names-",
      dirs: ["logs"],
    });
    const theirs: string[] = [];
    const mine: string[] = [];
    for (const [names, shared] of ROWS) {
      const first = shared
        ? "  server { listen 127.0.0.1:1; server_name first.com; }\n"
        : "";
      await Deno.writeTextFile(
        p.conf,
        `events {}
http {
  access_log off;
${first}  server { listen 127.0.0.1:1; server_name ${names}; }
}
`,
      );
      const label = `${names}${shared ? "" : " (alone)"} => `;
      theirs.push(
        label +
          emergOf(await nginxTestOutput({ prefix: p.prefix, conf: p.conf })),
      );
      mine.push(label + ours(p.conf));
    }
    deepStrictEqual(mine, theirs);
  },
);
