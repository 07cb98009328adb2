/**
 * The location search's skip of file-type regexes (`\.(js|css)$`) for a URI
 * that ends in none of their endings: which shapes qualify, and that the
 * search finds what running every regex finds.
 */
import { deepStrictEqual } from "node:assert/strict";
import { fileEndings, findLocation } from "../../src/engine/locations.ts";
import { compileText } from "./_conf.ts";

Deno.test("fileEndings() reads the endings of the file-type shapes only", () => {
  // [the regex as written, its endings or null]
  const table: [string, string[] | null][] = [
    ["\\.(gif|jpg|jpeg|png)$", ["gif", "jpg", "jpeg", "png"]],
    ["\\.js$", ["js"]],
    [".*\\.(css|js)$", ["css", "js"]],
    ["^.+\\.(?:woff2|tar-gz|a_b)$", ["woff2", "tar-gz", "a_b"]],
    ["\\.(js|css)?$", null],
    ["\\.(js|)$", null],
    ["\\.(tar\\.gz)$", null],
    ["^/api/.*\\.js$", null],
    ["\\.php(/|$)", null],
    ["\\.(js|css)", null],
    ["a|\\.(js)$", null],
    ["^/(.*)\\.js$", null],
  ];
  for (const [source, endings] of table) {
    deepStrictEqual(fileEndings(source), endings, source);
  }
});

Deno.test("findLocation() with the ending skip finds what running every regex finds", () => {
  for (const caseless of [false, true]) everyRegexFinds(caseless);
});

/**
 * The search with and without the ending skip, the index and the search
 * with regard to case or without it (nginx for Windows), as the gateway
 * always runs them.
 */
function everyRegexFinds(caseless: boolean): void {
  const conf = compileText(
    `http { server {
  location / { return 200; }
  location ~* \\.(GIF|jpg)$ { return 201; }
  location ~ \\.(js|css)$ { return 202; }
  location ~ .*\\.Html$ { return 203; }
  location ~ ^/x/(.+)$ { return 204; }
  location ~* ^.+\\.(?:woff2|tar-gz)$ { return 205; }
} }`,
    caseless,
  );
  const index = conf.servers[0]!.conf.locations;
  const { regexEndings: _, ...plain } = index;
  const uris = [
    "/",
    "/a.gif",
    "/a.GIF",
    "/a.Gif",
    "/a.jpg/",
    "/a.b/c",
    "/a.js",
    "/a.JS",
    "/a.css\n",
    "/a.JS\n",
    "/a.Html\n",
    "/a.html",
    "/a.Html",
    "/x/y.Html",
    "/x/y.png",
    "/.woff2",
    "/f.TAR-GZ",
    "/f.\u212Aa",
    "/no-dot",
    "",
  ];
  for (const uri of uris) {
    const found = findLocation(index, uri, caseless);
    const every = findLocation(plain, uri, caseless);
    deepStrictEqual(
      found.kind === "location" ? [found.conf, found.captures?.[0]] : found,
      every.kind === "location" ? [every.conf, every.captures?.[0]] : every,
      JSON.stringify(uri),
    );
  }
  deepStrictEqual(index.regexEndings?.map((e) => e && [...e]), [
    ["gif", "jpg"],
    ["js", "css"],
    [caseless ? "html" : "Html"],
    null,
    ["woff2", "tar-gz"],
  ]);
}
