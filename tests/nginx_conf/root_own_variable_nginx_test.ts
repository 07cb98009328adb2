/**
 * `$document_root` and `$realpath_root` in a `root` or `alias` are read
 * from that very directive: nginx 1.22 refuses them at load with its words
 * (ngx_http_core_root), and the gateway with the same. Written in other
 * letters, nginx takes the file and meets the cycle with each request; the
 * gateway refuses it as the lower-case name (its evaluation had no such
 * guard: the stack overflowed).
 */
import { deepStrictEqual } from "node:assert/strict";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("nginx_conf/root_own_variable_nginx_test.ts", [
  "nginx",
]);

/** [a location's directive, the refusal nginx names, the gateway's] */
const ROWS: [string, string, string][] = [
  [
    "root $document_root/sub;",
    'the $document_root variable cannot be used in the "root" directive',
    'the $document_root variable cannot be used in the "root" directive',
  ],
  [
    "root ${document_root}/sub;",
    'the $document_root variable cannot be used in the "root" directive',
    'the $document_root variable cannot be used in the "root" directive',
  ],
  [
    "alias $realpath_root/sub/;",
    'the $realpath_root variable cannot be used in the "alias" directive',
    'the $realpath_root variable cannot be used in the "alias" directive',
  ],
  [
    "root $Document_Root/sub;",
    "",
    'the $document_root variable cannot be used in the "root" directive',
  ],
  ["root $uri/sub;", "", ""],
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
  "$document_root and $realpath_root in a root or alias are refused at load with nginx 1.22's words",
  NEEDS,
  async () => {
    await using p = await nginxPrefix("", {
      name: "root-own-",
      dirs: ["logs"],
    });
    const got: string[][] = [];
    const want: string[][] = [];
    for (const [directive, theirs, mine] of ROWS) {
      await Deno.writeTextFile(
        p.conf,
        `events {}
http {
  access_log off;
  server { listen 127.0.0.1:1; location /x/ { ${directive} } }
}
`,
      );
      got.push([
        directive,
        emergOf(await nginxTestOutput({ prefix: p.prefix, conf: p.conf })),
        ours(p.conf),
      ]);
      want.push([directive, theirs, mine]);
    }
    deepStrictEqual(got, want);
  },
);
