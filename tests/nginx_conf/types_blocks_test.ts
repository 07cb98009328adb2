/**
 * Several `types {}` blocks at one level, as nginx reads them
 * (`ngx_http_core_types`): each adds to the level's one table, a later type
 * for an extension wins with nginx's `[warn]`, and a level with blocks of
 * its own replaces its parent's table. The idiom is
 * `include mime.types; types { application/javascript mjs; }`: the gateway
 * kept the last block only, so `.html` and `.css` fell to `default_type`.
 * Each row's types were read from nginx 1.22 serving the same file.
 */
import { deepStrictEqual } from "node:assert/strict";
import { parseNginxConf } from "../../src/nginx_conf/parser.ts";
import { compileHttp } from "../../src/nginx_conf/compile.ts";
import type { LocationConf } from "../../src/engine/mod.ts";

/** Compiles `http { … }` text; the warnings without their place. */
function compiled(http: string): { conf: LocationConf[]; warnings: string[] } {
  const text = `events {}\n${http}`;
  const result = compileHttp(
    parseNginxConf("/n/conf/nginx.conf", {
      readTextFile: () => text,
      readDirFiles: () => [],
    }),
    { file: "/n/conf/nginx.conf", prefix: "/n", caseless: false },
  );
  if (result.conf === null) throw new Error(result.errors.join("\n"));
  const server = result.conf.servers[0]!.conf;
  const all: LocationConf[] = [server];
  const walk = (loc: LocationConf) => {
    for (const child of loc.locations.prefixes) {
      all.push(child);
      walk(child);
    }
  };
  walk(server);
  return {
    conf: all,
    warnings: result.warnings.filter((w) => !w.startsWith('"events"')),
  };
}

const EXTENSIONS = ["html", "js", "mjs", "css", "txt", "png"];

/** A location's type for each of EXTENSIONS ("-" for default_type). */
function typesAt(loc: LocationConf): string[] {
  return EXTENSIONS.map((e) => loc.types.get(e) ?? "-");
}

const CASES: {
  name: string;
  http: string;
  want: Record<string, string[]>;
  warnings?: string[];
}[] = [
  {
    name: "a second block at http adds to the first",
    http: `http {
      types { text/html html; application/javascript js; }
      types { application/javascript mjs; }
      server { location /a/ { } }
    }`,
    want: {
      "/a/": [
        "text/html",
        "application/javascript",
        "application/javascript",
        "-",
        "-",
        "-",
      ],
    },
  },
  {
    name: "an extension given again takes the later type, warned once",
    http: `http {
      types { text/html html; application/javascript js; }
      types { application/javascript mjs; text/javascript js; }
      server { location /a/ { } location /b/ { } }
    }`,
    want: {
      "/a/": [
        "text/html",
        "text/javascript",
        "application/javascript",
        "-",
        "-",
        "-",
      ],
      "/b/": [
        "text/html",
        "text/javascript",
        "application/javascript",
        "-",
        "-",
        "-",
      ],
    },
    warnings: [
      'duplicate extension "js", content type: "text/javascript", previous content type: "application/javascript" in /n/conf/nginx.conf:4',
    ],
  },
  {
    name: "two blocks in a location replace http's table",
    http: `http {
      types { text/html html; application/javascript js; }
      types { application/javascript mjs; }
      server {
        location /s/ { types { text/css css; } types { text/plain txt; } }
      }
    }`,
    want: { "/s/": ["-", "-", "-", "text/css", "text/plain", "-"] },
  },
  {
    name: "a nested location's block replaces, a sibling inherits both",
    http: `http {
      types { text/html html; }
      types { application/javascript mjs; }
      server {
        location /n/ { location /n/i/ { types { image/png png; } } }
      }
    }`,
    want: {
      "/n/": ["text/html", "-", "application/javascript", "-", "-", "-"],
      "/n/i/": ["-", "-", "-", "-", "-", "image/png"],
    },
  },
  {
    name: "a server's two blocks replace http's, its locations inherit them",
    http: `http {
      types { text/html html; }
      server {
        types { text/css css; }
        types { image/png png; }
        location /a/ { }
      }
    }`,
    want: { "/a/": ["-", "-", "-", "text/css", "-", "image/png"] },
  },
];

for (const c of CASES) {
  Deno.test(`types {}: ${c.name}`, () => {
    const { conf, warnings } = compiled(c.http);
    for (const [name, want] of Object.entries(c.want)) {
      const loc = conf.find((l) => l.name === name);
      deepStrictEqual(loc && typesAt(loc), want, name);
    }
    deepStrictEqual(warnings, c.warnings ?? []);
  });
}
