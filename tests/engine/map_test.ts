/**
 * `map` values as nginx finds them (`ngx_http_map_find`): exact, then the
 * regexes in order, then `default`; a map whose result is its source's
 * alone remembers it by source, and one that reads anything else does not.
 * A regex key with groups leaves its captures as the request's
 * (ngx_http_regex_exec), remembered or not.
 */
import { deepStrictEqual } from "node:assert/strict";
import { evaluateMap } from "../../src/engine/variables.ts";
import { compileText, requestVars } from "./_conf.ts";

const conf = compileText(`http {
  map $uri $by_uri {
    default other;
    /exact exact;
    ~*\\.html?$ html;
    ~^/(?<first>[a-z]+)/(\\d+)$ "n=$2";
  }
  map $uri $reads_captures {
    default "d$1";
    /exact "e$1";
    ~^/(x+)$ "r$1";
  }
  map $uri $reads_host {
    default other;
    ~^/h$ "host=$host";
  }
  server { listen 8081; }
}`);

Deno.test("evaluateMap(): exact, regexes in order, default; the same answer the second time", async (t) => {
  // [map, uri, request captures, host, value, captures after when changed]
  const cases: [string, string, string[], string, string, string[]?][] = [
    ["by_uri", "/exact", [], "a", "exact"],
    ["by_uri", "/EXACT", [], "a", "exact"],
    ["by_uri", "/index.HTML", [], "a", "html"],
    ["by_uri", "/abc/42", [], "a", "n=42", ["/abc/42", "abc", "42"]],
    ["by_uri", "/app.js", [], "a", "other"],
    ["reads_captures", "/xx", ["/z", "Q"], "a", "rxx", ["/xx", "xx"]],
    // An exact or default `$1` is the request's own capture.
    ["reads_captures", "/exact", ["/z", "Q"], "a", "eQ"],
    ["reads_captures", "/exact", ["/z", "R"], "a", "eR"],
    ["reads_captures", "/other", ["/z", "S"], "a", "dS"],
    ["reads_captures", "/other", [], "a", "d"],
    ["reads_host", "/h", [], "one", "host=one"],
    ["reads_host", "/h", [], "two", "host=two"],
  ];
  for (const [name, uri, captures, host, want, after] of cases) {
    await t.step(`$${name} for ${uri} (${captures.join(",")}, ${host})`, () => {
      // Twice, each time a new request: the second may be remembered.
      for (let i = 0; i < 2; i++) {
        const vars = requestVars(uri);
        vars.captures = captures;
        vars.host = host;
        deepStrictEqual(evaluateMap(name, conf.maps.get(name)!, vars), want);
        deepStrictEqual(vars.captures, after ?? captures, "the captures after");
      }
    });
  }
});

Deno.test("evaluateMap(): a request keeps the value it found first, as nginx caches it", () => {
  const vars = requestVars("/index.html");
  const map = conf.maps.get("by_uri")!;
  deepStrictEqual(evaluateMap("by_uri", map, vars), "html");
  vars.uri = "/app.js";
  deepStrictEqual(evaluateMap("by_uri", map, vars), "html");
  deepStrictEqual(evaluateMap("by_uri", map, requestVars("/app.js")), "other");
});

Deno.test("evaluateMap(): each of several maps keeps its own first value for the request", async (t) => {
  // The first map's value is kept apart from the others'; every order of
  // three maps reads back what each found first after `$uri` changed.
  const orders = [
    ["by_uri", "reads_captures", "reads_host"],
    ["reads_host", "by_uri", "reads_captures"],
    ["reads_captures", "reads_host", "by_uri"],
  ];
  const first: Record<string, string> = {
    "by_uri": "html",
    "reads_captures": "d",
    "reads_host": "other",
  };
  for (const order of orders) {
    await t.step(order.join(", "), () => {
      const vars = requestVars("/index.html");
      for (const name of order) {
        deepStrictEqual(
          evaluateMap(name, conf.maps.get(name)!, vars),
          first[name],
        );
      }
      vars.uri = "/h";
      for (const name of [...order].reverse()) {
        deepStrictEqual(
          evaluateMap(name, conf.maps.get(name)!, vars),
          first[name],
        );
      }
    });
  }
});
