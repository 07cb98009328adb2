/** The JSON config file. */
import { deepStrictEqual, throws } from "node:assert/strict";
import { parseConfigFile } from "../../src/config/config_file.ts";

Deno.test("parseConfigFile() names unknown keys and wrong types", () => {
  deepStrictEqual(
    parseConfigFile('{"upstream": "http://a", "logKeep": 3}', "f"),
    { upstream: "http://a", logKeep: 3 },
  );
  throws(
    () => parseConfigFile('{"Upstream": "x"}', "f"),
    /^TypeError: unknown key "Upstream" in f; did you mean "upstream"\?$/,
  );
  throws(
    () => parseConfigFile('{"serverNam": "x", "listen": "1"}', "C:\\gw.json"),
    /^TypeError: unknown key "serverNam" in C:\\gw\.json; did you mean "serverName"\?$/,
  );
  throws(
    () => parseConfigFile('{"colour": "x"}', "f"),
    /^TypeError: unknown key "colour" in f$/,
  );
  throws(
    () => parseConfigFile('{"addForwardedHeaders": "yes"}', "f"),
    /^TypeError: key "addForwardedHeaders" must be a boolean in f$/,
  );
  throws(() => parseConfigFile("{", "f"), /^SyntaxError: invalid JSON in f: /);
  throws(
    () => parseConfigFile("[]", "f"),
    /^TypeError: expected a JSON object in f$/,
  );
  throws(
    () => parseConfigFile('{"upstream": [1]}', "f"),
    /key "upstream" must be a string or a list of strings/,
  );
});

Deno.test("parseConfigFile() takes numbers where people write them: a port, seconds, bytes, counts", () => {
  const cases: [string, Record<string, unknown>][] = [
    ['{"listen": 21081}', { listen: "21081" }],
    ['{"proxyReadTimeout": 60}', { proxyReadTimeout: "60" }],
    ['{"proxyConnectTimeout": 5, "proxySendTimeout": 7}', {
      proxyConnectTimeout: "5",
      proxySendTimeout: "7",
    }],
    ['{"clientMaxBodySize": 1048576}', { clientMaxBodySize: "1048576" }],
    ['{"proxyBufferSize": 8192, "logMaxSize": 0}', {
      proxyBufferSize: "8192",
      logMaxSize: "0",
    }],
    ['{"logKeep": "3", "upstreamKeepalive": "16"}', {
      logKeep: 3,
      upstreamKeepalive: 16,
    }],
  ];
  for (const [text, expected] of cases) {
    deepStrictEqual(parseConfigFile(text, "f"), expected, text);
  }
  // Not a count or a whole number: still the type error.
  for (
    const text of [
      '{"listen": 1.5}',
      '{"listen": -1}',
      '{"serverName": 7}',
      '{"logKeep": "three"}',
    ]
  ) {
    throws(() => parseConfigFile(text, "f"), /^TypeError: key "\w+" must be a/);
  }
});

Deno.test("parseConfigFile() takes only its own keys: a name on Object's prototype is an unknown key", async (t) => {
  for (
    const key of [
      "toString",
      "constructor",
      "hasOwnProperty",
      "valueOf",
      "__proto__",
      "isPrototypeOf",
    ]
  ) {
    await t.step(key, () => {
      throws(
        () => parseConfigFile(`{${JSON.stringify(key)}: 1}`, "gw.json"),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message.startsWith(`unknown key "${key}" in gw.json`),
      );
    });
  }
});
