import { strictEqual } from "node:assert/strict";
import { rawUpstreamUri, upstreamUri } from "../../src/proxy/mod.ts";

// Each row was sent to nginx 1.22 (`proxy_pass` in the location named) and
// the request line its upstream received is the expected value.
const CASES: {
  what: string;
  location: string;
  proxyUri: string | null;
  requestUri: string;
  uri: string;
  args?: string;
  uriChanged?: boolean;
  internal?: boolean;
  locationInvalid?: boolean;
  sent: string;
}[] = [
  {
    what: "a URI part replaces the prefix; an escape makes $uri escaped again",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/api/a%20b?x=1",
    uri: "/api/a b",
    args: "x=1",
    sent: "/a%20b?x=1",
  },
  {
    what: "escapes of unreserved bytes are decoded",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/api/a%41%42",
    uri: "/api/aAB",
    sent: "/aAB",
  },
  {
    what: "| is escaped when the path had an escape",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/api/a%7Cb",
    uri: "/api/a|b",
    sent: "/a%7Cb",
  },
  {
    what: "a path without % goes with its bytes as they are",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/api/a|b",
    uri: "/api/a|b",
    sent: "/a|b",
  },
  {
    what: "an encoded slash is a slash",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/api/a%2Fb",
    uri: "/api/a/b",
    sent: "/a/b",
  },
  {
    what: "dot segments and double slashes are normalised",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/api/./c/../d//e",
    uri: "/api/d/e",
    sent: "/d/e",
  },
  {
    what: "UTF-8 bytes are escaped in upper case",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/api/%E4%B8%AD",
    uri: "/api/\xe4\xb8\xad",
    sent: "/%E4%B8%AD",
  },
  {
    what: "an escaped ? stays escaped; the query goes as sent",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/api/a%3Fb?q=%3F",
    uri: "/api/a?b",
    args: "q=%3F",
    sent: "/a%3Fb?q=%3F",
  },
  {
    what: "quotes and backslashes: escaped only with an escape",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/api/a%22b%5C",
    uri: '/api/a"b\\',
    sent: "/a%22b%5C",
  },
  {
    what: "quotes and the rest without an escape go raw",
    location: "/api/",
    proxyUri: "/",
    requestUri: '/api/a{b}^c`d\\e"',
    uri: '/api/a{b}^c`d\\e"',
    sent: '/a{b}^c`d\\e"',
  },
  {
    what: "no URI part: the target exactly as sent",
    location: "/raw/",
    proxyUri: null,
    requestUri: "/raw/a%41//b/../c?z",
    uri: "/raw/aA/c",
    args: "z",
    sent: "/raw/a%41//b/../c?z",
  },
  {
    what: "a longer URI part; %25 stays %25",
    location: "/v1/",
    proxyUri: "/v2/",
    requestUri: "/v1/x%25y",
    uri: "/v1/x%y",
    sent: "/v2/x%25y",
  },
  {
    what: "rewrite … break: the URI part is not applied, $uri escaped",
    location: "/rw/",
    proxyUri: "/p/",
    requestUri: "/rw/a|b",
    uri: "/x/a|b",
    uriChanged: true,
    internal: true,
    locationInvalid: true,
    sent: "/x/a%7Cb",
  },
  {
    what: "rewrite … break keeps the arguments",
    location: "/rw/",
    proxyUri: "/p/",
    requestUri: "/rw/a%41b?k=v",
    uri: "/x/aAb",
    args: "k=v",
    uriChanged: true,
    internal: true,
    locationInvalid: true,
    sent: "/x/aAb?k=v",
  },
  {
    what: "no URI part after a rewrite: $uri escaped",
    location: "/rwn/",
    proxyUri: null,
    requestUri: "/rwn/a|b",
    uri: "/x/a|b",
    uriChanged: true,
    internal: true,
    sent: "/x/a%7Cb",
  },
  {
    what: "rewrite … last into a location with a URI part: replaced",
    location: "/v1/",
    proxyUri: "/v2/",
    requestUri: "/rl/a|b",
    uri: "/v1/a|b",
    uriChanged: true,
    internal: true,
    sent: "/v2/a%7Cb",
  },
  {
    what: "a regex location without a URI part: as sent",
    location: "^/re/",
    proxyUri: null,
    requestUri: "/re/a%41//b",
    uri: "/re/aA/b",
    sent: "/re/a%41//b",
  },
  {
    what: "a named location reached by try_files: as sent",
    location: "@named",
    proxyUri: null,
    requestUri: "/tf/a%41//b?q",
    uri: "/tf/aA/b",
    args: "q",
    internal: true,
    sent: "/tf/a%41//b?q",
  },
  {
    what: "an error_page redirect to a URI: $uri escaped, replaced",
    location: "/api/",
    proxyUri: "/",
    requestUri: "/ep/zz%41",
    uri: "/api/err/ep/zzA",
    uriChanged: true,
    internal: true,
    sent: "/err/ep/zzA",
  },
  {
    what: "an exact location",
    location: "/ex",
    proxyUri: "/exact",
    requestUri: "/ex?a=1",
    uri: "/ex",
    args: "a=1",
    sent: "/exact?a=1",
  },
  {
    what: "a prefix without a slash joins the rest as it is",
    location: "/noslash",
    proxyUri: "/ns",
    requestUri: "/noslashxyz",
    uri: "/noslashxyz",
    sent: "/nsxyz",
  },
];

Deno.test("upstreamUri() sends what nginx 1.22 sends upstream", () => {
  for (const c of CASES) {
    const sent = upstreamUri({
      proxyUri: c.proxyUri,
      locationName: c.location,
      uri: c.uri,
      args: c.args ?? "",
      requestUri: c.requestUri,
      uriChanged: c.uriChanged ?? false,
      internal: c.internal ?? false,
      locationInvalid: c.locationInvalid ?? false,
    });
    strictEqual(sent, c.sent, c.what);
  }
});

Deno.test("rawUpstreamUri() follows another one-segment location and leaves the rest to nginx's rule", async (t) => {
  // [proxy_pass URI part, location, client's target, sent or null]
  const cases: [string, string, string, string | null][] = [
    ["/", "/backend/", "/backend/loginms?a=1", "/loginms?a=1"],
    ["/v1/", "/backend/", "/backend/a/../b%20c", "/v1/b%20c"],
    ["/", "/backend/", "/backend", null],
    ["/", "/backend/", "/api/loginms", null],
    ["/", "/api", "/api/x", null],
    ["/", "/a/b/", "/a/b/x", null],
  ];
  for (const [proxyUri, locationName, requestUri, sent] of cases) {
    await t.step(`${locationName} ${requestUri}`, () => {
      strictEqual(
        rawUpstreamUri({ proxyUri, locationName, requestUri, caseless: false }),
        sent,
      );
    });
  }
  await t.step(
    "the client's letter case of the prefix (nginx for Windows)",
    () => {
      strictEqual(
        rawUpstreamUri({
          proxyUri: "/",
          locationName: "/api/",
          requestUri: "/API/q",
          caseless: true,
        }),
        "/q",
      );
    },
  );
});
