import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { compileText, describe, phases } from "./_conf.ts";

// The example of nginx's `location` documentation, plus nesting, regex
// order, `^~`, `@name` and the proxied location's slash redirect.
const LOCATIONS = compileText(`http { server {
  location = / { return 200 A; }
  location / { return 200 B; }
  location /documents/ {
    return 200 C;
    location /documents/deep/ { return 200 C2; }
    location ~ \\.pdf$ { return 200 C3; }
  }
  location ^~ /images/ { return 200 D; }
  location ~* \\.(gif|jpg|jpeg)$ { return 200 E; }
  location ~ \\.(jpg|png)$ { return 200 F; }
  location /api/ { proxy_pass http://127.0.0.1:8080/; }
  location = /api2 { return 200 G; }
  location /api2/ { proxy_pass http://127.0.0.1:8080/; }
  location @named { return 200 H; }
} }`);

Deno.test("runPhases() finds locations as nginx does", async (t) => {
  const table: [string, string][] = [
    ["/", "return 200 A"],
    ["/index.html", "return 200 B"],
    ["/documents/document.html", "return 200 C"],
    ["/documents/deep/x.html", "return 200 C2"],
    ["/documents/deep/x.pdf", "return 200 C3"],
    ["/images/1.gif", "return 200 D"],
    ["/documents/1.jpg", "return 200 E"],
    ["/documents/1.JPG", "return 200 E"],
    ["/x/1.png", "return 200 F"],
    ["/x/1.PNG", "return 200 B"],
    ["/api/loginms", "proxy /api/"],
    ["/api", "301 /api/"],
    ["/api2", "return 200 G"],
    ["/api2/x", "proxy /api2/"],
    ["/@named", "return 200 B"],
  ];
  for (const [uri, expected] of table) {
    await t.step(uri, () => {
      strictEqual(describe(phases(LOCATIONS, uri).content), expected);
    });
  }
});

Deno.test("runPhases() gives a URI a location names whole before a longer proxied name's slash redirect, as nginx", async (t) => {
  const conf = compileText(`http { server {
  location / { return 200 A; }
  location // { proxy_pass http://127.0.0.1:8080; }
  location /x { return 200 X; }
  location /x/ { proxy_pass http://127.0.0.1:8080/; }
  location /y/ { proxy_pass http://127.0.0.1:8080/; }
  location /n/ {
    return 200 N;
    location /n/a { return 200 NA; }
    location /n/a/ { proxy_pass http://127.0.0.1:8080/; }
    location /n/b/ { proxy_pass http://127.0.0.1:8080/; }
  }
  location ~ ^/y$ { return 200 R; }
} }`);
  // [URI, what nginx 1.22 answers these with] (`//` itself never gets
  // here: merge_slashes makes it `/`).
  const table: [string, string][] = [
    ["/", "return 200 A"],
    ["/x", "return 200 X"],
    ["/x/", "proxy /x/"],
    ["/y", "301 /y/"],
    ["/n/a", "return 200 NA"],
    ["/n/b", "301 /n/b/"],
    ["/n/c", "return 200 N"],
  ];
  for (const [uri, expected] of table) {
    await t.step(uri, () => {
      strictEqual(describe(phases(conf, uri).content), expected);
    });
  }
});

Deno.test("runPhases() matches prefixes without case only when asked (nginx for Windows)", () => {
  const conf = compileText(
    `http { server { location /api/ { proxy_pass http://127.0.0.1:8080/; } location / { return 200 B; } } }`,
    true,
  );
  strictEqual(describe(phases(conf, "/API/x").content), "proxy /api/");
  strictEqual(describe(phases(LOCATIONS, "/API/x").content), "return 200 B");
});

const REWRITES = compileText(`http { server {
  rewrite ^/old/(.*)$ /new/$1 last;
  rewrite ^/gone$ /here? permanent;
  location /new/ { return 200 new:$uri:$args; }
  location /api {
    rewrite ^/api/(.*)$ /$1 break;
    proxy_pass http://127.0.0.1:8080;
  }
  location /ext { rewrite ^/ext/(.*)$ http://example.com/$1 redirect; }
  location /loop { rewrite ^ /loop last; }
  location /args { rewrite ^ /new/x?a=1; }
  location /opt {
    if ($request_method = OPTIONS) { return 204; }
    if ($http_x_token ~* "^abc(.*)$") { return 200 token:$1; }
    set $flag 0;
    if ($arg_on) { set $flag 1; }
    if ($flag) { return 200 flag; }
    return 403;
  }
  location /cond/ {
    if (!-f $request_filename) { return 404; }
    return 200 exists;
  }
  location /if/ {
    if ($request_method = POST) { proxy_pass http://127.0.0.1:9000; }
    return 200 plain;
  }
} }`);

Deno.test("runPhases() runs the rewrite module as nginx does", async (t) => {
  const table: [string, string, { method?: string; headers?: HeadersInit }?][] =
    [
      ["/old/a?b=1", "return 200 new:/new/a:b=1"],
      ["/gone?x=1", "return 301 /here"],
      ["/api/Home31/UpDateTitle?a=b", "proxy /api rewritten"],
      ["/ext/p?q=1", "return 302 http://example.com/p?q=1"],
      [
        "/loop",
        'status 500 rewrite or internal redirection cycle while processing "/loop"',
      ],
      ["/args?z=2", "return 200 new:/new/x:a=1&z=2"],
      ["/opt", "return 204", { method: "OPTIONS" }],
      ["/opt", "return 200 token:DEF", { headers: { "x-token": "ABCDEF" } }],
      ["/opt?on=1", "return 200 flag"],
      ["/opt", "return 403"],
      ["/opt?on=0", "return 403"],
      ["/cond/x", "return 404"],
      ["/if/x", "return 200 plain"],
    ];
  for (const [uri, expected, init] of table) {
    await t.step(`${init?.method ?? "GET"} ${uri}`, () => {
      strictEqual(describe(phases(REWRITES, uri, init).content), expected);
    });
  }
  const { vars } = phases(REWRITES, "/api/Home31/UpDateTitle?a=b");
  deepStrictEqual([vars.uri, vars.args], ["/Home31/UpDateTitle", "a=b"]);
});

Deno.test("runPhases() answers `if` with the block's own handler", () => {
  // `return` after the `if` still runs (nginx's "if is evil"): the POST
  // gets the return, and the proxy is chosen only when no return answers.
  const conf = compileText(`http { server { location /if/ {
    if ($request_method = POST) { proxy_pass http://127.0.0.1:9000; }
  } } }`);
  strictEqual(
    describe(phases(conf, "/if/x", { method: "POST" }).content),
    "proxy /if/",
  );
  strictEqual(describe(phases(conf, "/if/x").content), "static /n/html/if/x");
});

const STATIC = compileText(`http { server {
  root html;
  location / { try_files $uri $uri/ /index.html; }
  location /strict/ { try_files $uri =404; }
  location /app/ { try_files $uri @backend; }
  location @backend { proxy_pass http://127.0.0.1:8080; }
  location /assets/ { alias /srv/assets/; }
  location /internal/ { internal; }
  location /plain/ { }
  error_page 404 /404.html;
} }`);

const FILES: Record<string, "file" | "dir"> = {
  "/n/html/index.html": "file",
  "/n/html/app.js": "file",
  "/n/html/sub": "dir",
  "/n/html/docs": "dir",
  "/n/html/docs/index.html": "file",
  "/n/html/plain/empty": "dir",
};

Deno.test("runPhases() serves files with try_files, index and alias as nginx does", async (t) => {
  const table: [string, string][] = [
    ["/app.js", "static /n/html/app.js"],
    ["/", "static /n/html/index.html"],
    ["/deep/route", "static /n/html/index.html"],
    // The folder test takes $uri/ without its slash: the static module
    // then redirects to the slash (ngx_http_core_try_files_phase).
    ["/sub", "static /n/html/sub"],
    ["/docs/", "static /n/html/docs/index.html"],
    ["/strict/x.js", "status 404"],
    ["/app/x", "proxy @backend"],
    ["/assets/a.css", "static /srv/assets/a.css"],
    ["/internal/x", "status 404"],
    ["/plain/empty/", "403 /n/html/plain/empty/"],
    ["/plain/missing/", "status 404"],
    ["/plain/x.txt", "static /n/html/plain/x.txt"],
  ];
  for (const [uri, expected] of table) {
    await t.step(uri, () => {
      strictEqual(
        describe(phases(STATIC, uri, { files: FILES }).content),
        expected,
      );
    });
  }
});

Deno.test("runPhases() reads $request_filename in the location chosen (the SPA idiom with -e)", async (t) => {
  const conf = compileText(`http { server {
    root html;
    location / {
      if (!-e $request_filename) { rewrite ^/(.*) /index.html last; }
    }
    location /docs/ { root /srv; if (-f $request_filename) { return 200 $request_filename; } }
  } }`);
  const files: Record<string, "file" | "dir"> = {
    "/n/html/index.html": "file",
    "/n/html/app.js": "file",
    "/srv/docs/a.txt": "file",
  };
  const table: [string, string][] = [
    ["/app.js", "static /n/html/app.js"],
    ["/deep/route", "static /n/html/index.html"],
    ["/docs/a.txt", "return 200 /srv/docs/a.txt"],
  ];
  for (const [uri, expected] of table) {
    await t.step(uri, () => {
      strictEqual(describe(phases(conf, uri, { files }).content), expected);
    });
  }
});

Deno.test("runPhases() stops an internal redirect loop at nginx's tenth change, naming the target", () => {
  const conf = compileText(`http { server {
    location /a { try_files $uri /b; }
    location /b { try_files $uri /a; }
  } }`);
  // Ten redirects, then the eleventh (to /b) is refused (uri_changes).
  strictEqual(
    describe(phases(conf, "/a").content),
    'status 500 rewrite or internal redirection cycle while internally redirecting to "/b"',
  );
});

Deno.test("runPhases() gives try_files' last name its own args, as nginx: none after it is an empty $args", async (t) => {
  const conf = compileText(`http { server { listen 80; root /r;
    location / { try_files $uri /index.html; }
    location /q/ { try_files $uri /index.html?from=q; }
    location /i/ { }
  } }`);
  // [target, files, $uri, $args, argsSet]
  const cases: [
    string,
    Record<string, "file" | "dir">,
    string,
    string,
    unknown,
  ][] = [
    ["/x?a=1", { "/r/index.html": "file" }, "/index.html", "", true],
    ["/q/x?a=1", { "/r/index.html": "file" }, "/index.html", "from=q", true],
    ["/x?a=1", { "/r/x": "file" }, "/x", "a=1", undefined],
    // The index module keeps the request's args.
    [
      "/i/?a=1",
      { "/r/i/index.html": "file" },
      "/i/index.html",
      "a=1",
      undefined,
    ],
  ];
  for (const [target, files, uri, args, set] of cases) {
    await t.step(`${target} with ${JSON.stringify(files)}`, () => {
      const { vars } = phases(conf, target, { files });
      deepStrictEqual([vars.uri, vars.args, vars.argsSet], [uri, args, set]);
    });
  }
});
