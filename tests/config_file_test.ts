/** The JSON config file. */
import { deepStrictEqual, throws } from "node:assert/strict";
import { parseConfigFile } from "../src/config_file.ts";

Deno.test("parseConfigFile() names unknown keys and wrong types", () => {
  deepStrictEqual(
    parseConfigFile('{"upstream": "http://a", "logKeep": 3}', "f"),
    { upstream: "http://a", logKeep: 3 },
  );
  throws(
    () => parseConfigFile('{"Upstream": "x"}', "f"),
    /unknown key "Upstream"/,
  );
  throws(
    () => parseConfigFile('{"addForwardedHeaders": "yes"}', "f"),
    /key "addForwardedHeaders" must be a boolean/,
  );
  throws(() => parseConfigFile("{", "f"), SyntaxError);
  throws(
    () => parseConfigFile('{"upstream": [1]}', "f"),
    /key "upstream" must be a string or a list of strings/,
  );
});
