import { deepStrictEqual } from "node:assert/strict";
import { UpstreamTries } from "../../src/log/mod.ts";

Deno.test("UpstreamTries records each try as nginx's upstream state", async (t) => {
  let ms = 0;
  const at = (n: number) => ms = n;
  const cases: [string, (tries: UpstreamTries) => void, unknown[]][] = [
    ["answered", (tries) => {
      tries.startGroup();
      tries.begin("a:1");
      at(1);
      tries.connected();
      at(3);
      tries.answered(200);
      at(7);
    }, [["a:1", 200, 7, 1, 3, false]]],
    ["refused: no connect, no header", (tries) => {
      tries.begin("a:1");
      at(2);
      tries.failed(502);
      at(9);
    }, [["a:1", 502, 2, null, null, false]]],
    ["a timeout after the connect is 504", (tries) => {
      tries.begin("a:1");
      tries.connected();
      at(5);
      tries.failed(504);
    }, [["a:1", 504, 5, 0, null, false]]],
    ["the client left: no status", (tries) => {
      tries.begin("a:1");
      tries.failed(499);
    }, [["a:1", 0, 0, null, null, false]]],
    [
      "a body broken off after the head keeps the upstream's status",
      (tries) => {
        tries.begin("a:1");
        tries.connected();
        tries.answered(200);
        at(4);
        tries.failed(502);
        at(8);
      },
      [["a:1", 200, 4, 0, 0, false]],
    ],
    ["no live upstreams: the group's name", (tries) => {
      tries.noLive("backend");
    }, [["backend", 502, 0, null, null, false]]],
    [
      "an internal redirect to another proxied location starts a group",
      (tries) => {
        tries.startGroup();
        tries.begin("a:1");
        tries.failed(502);
        tries.startGroup();
        tries.begin("b:2");
        tries.answered(200);
      },
      [
        ["a:1", 502, 0, null, null, false],
        ["b:2", 200, 0, null, 0, true],
      ],
    ],
  ];
  for (const [what, run, expected] of cases) {
    await t.step(what, () => {
      ms = 0;
      const tries = new UpstreamTries(() => ms);
      run(tries);
      deepStrictEqual(
        tries.list().map((x) => [
          x.addr,
          x.status,
          x.responseMs,
          x.connectMs,
          x.headerMs,
          x.newGroup === true,
        ]),
        expected,
      );
    });
  }
});
