import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  type ContentTypeConf,
  contentTypeOf,
  NGINX_CHARSET_TYPES,
  typesFromDirectives,
  uriExtension,
} from "../../src/static/mod.ts";
import { stockMimeTypes } from "../_location_conf.ts";

Deno.test("typesFromDirectives() maps extensions, lower case, the later type winning with nginx's warning", () => {
  const { types, warnings } = typesFromDirectives([
    { name: "text/html", args: ["html", "HTM"] },
    { name: "application/javascript", args: ["js", "mjs"] },
    { name: "text/javascript", args: ["js"] },
  ]);
  deepStrictEqual([...types], [
    ["html", "text/html"],
    ["htm", "text/html"],
    ["js", "text/javascript"],
    ["mjs", "application/javascript"],
  ]);
  deepStrictEqual(warnings, [
    'duplicate extension "js", content type: "text/javascript", previous content type: "application/javascript"',
  ]);
});

Deno.test("typesFromDirectives() reads the stock mime.types as nginx 1.22 types files", () => {
  const types = stockMimeTypes();
  strictEqual(types.get("js"), "application/javascript");
  strictEqual(types.get("html"), "text/html");
  strictEqual(types.get("json"), "application/json");
  strictEqual(types.get("woff2"), "font/woff2");
  strictEqual(types.get("svgz"), "image/svg+xml");
  strictEqual(types.get("mjs"), undefined); // not in 1.22's file
});

Deno.test("uriExtension() finds the extension as ngx_http_set_exten does", async (t) => {
  const cases: [string, string | null][] = [
    ["/index.html", "html"],
    ["/a/b.min.JS", "JS"],
    ["/.env", null],
    ["/dir/.htaccess", null],
    ["/v1.2/LICENSE", null],
    ["/a.", ""],
    ["/", null],
    ["/a..b", "b"],
    ["/x/.hidden.txt", "txt"],
  ];
  for (const [uri, want] of cases) {
    await t.step(uri, () => strictEqual(uriExtension(uri), want));
  }
});

Deno.test("contentTypeOf() adds a charset only when set and the type is in charset_types", async (t) => {
  const base: ContentTypeConf = {
    types: stockMimeTypes(),
    defaultType: "application/octet-stream",
    charset: null,
    charsetTypes: NGINX_CHARSET_TYPES,
  };
  const cases: [
    string,
    Partial<ContentTypeConf>,
    string,
  ][] = [
    ["/index.html", {}, "text/html"],
    ["/INDEX.HTML", {}, "text/html"],
    ["/gbk.html", { charset: "gbk" }, "text/html; charset=gbk"],
    ["/app.js", { charset: "utf-8" }, "application/javascript; charset=utf-8"],
    ["/app.css", { charset: "utf-8" }, "text/css"],
    [
      "/app.css",
      { charset: "utf-8", charsetTypes: new Set(["*"]) },
      "text/css; charset=utf-8",
    ],
    ["/a.json", { charset: "utf-8" }, "application/json"],
    ["/.env", {}, "application/octet-stream"],
    [
      "/LICENSE",
      { defaultType: "text/plain", charset: "utf-8" },
      "text/plain; charset=utf-8",
    ],
  ];
  for (const [uri, conf, want] of cases) {
    await t.step(`${uri} ${JSON.stringify(conf.charset ?? null)}`, () => {
      strictEqual(contentTypeOf(uri, { ...base, ...conf }), want);
    });
  }
});
