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
