import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  DEFAULT_NEXT_UPSTREAM,
  droppedIsFailure,
  dropsAnswer,
  NEXT_ERROR,
  NEXT_INVALID_HEADER,
  NEXT_NON_IDEMPOTENT,
  NEXT_OFF,
  NEXT_TIMEOUT,
  nextUpstreamMask,
  readNextUpstream,
  shouldTryNext,
} from "../../src/upstream/try_next.ts";
import {
  type UpstreamAction,
  UpstreamError,
  type UpstreamFailureKind,
} from "../../src/upstream/error.ts";

const { mask: DEFAULT } = DEFAULT_NEXT_UPSTREAM;
const HTTP_502 = readNextUpstream(["http_502"], { module: "proxy" }).mask;
const HTTP_404 = readNextUpstream(["http_404"], { module: "proxy" }).mask;

function failure(kind: UpstreamFailureKind, action: UpstreamAction) {
  return new UpstreamError("x", { kind, action });
}

const CONNECT = "connecting to upstream";
const HEADER = "reading response header from upstream";

/** [failure, method, bits, moves on] as ngx_http_upstream_next decides. */
const FAILURES: [UpstreamError, string, number, boolean][] = [
  [failure("refused", CONNECT), "GET", DEFAULT, true],
  [failure("refused", CONNECT), "POST", DEFAULT, true],
  [failure("timed-out", CONNECT), "POST", DEFAULT, true],
  [failure("timed-out", HEADER), "GET", DEFAULT, true],
  // A POST, LOCK or PATCH sent moves on only with non_idempotent.
  [failure("timed-out", HEADER), "POST", DEFAULT, false],
  [failure("reset", HEADER), "PATCH", DEFAULT, false],
  [failure("reset", HEADER), "LOCK", DEFAULT | NEXT_NON_IDEMPOTENT, true],
  [failure("premature-close", HEADER), "POST", NEXT_ERROR, false],
  [
    failure("premature-close", HEADER),
    "POST",
    NEXT_ERROR | NEXT_NON_IDEMPOTENT,
    true,
  ],
  // `error` alone: a timeout does not move on; `timeout` alone: an error does not.
  [failure("timed-out", HEADER), "GET", NEXT_ERROR, false],
  [failure("timed-out", CONNECT), "GET", NEXT_ERROR, false],
  [failure("refused", CONNECT), "GET", NEXT_TIMEOUT, false],
  // An answer that cannot be read is `invalid_header`, not `error`.
  [failure("invalid-response", HEADER), "GET", DEFAULT, false],
  [failure("invalid-response", HEADER), "GET", NEXT_INVALID_HEADER, true],
  [failure("invalid-response", HEADER), "POST", NEXT_INVALID_HEADER, false],
  [failure("refused", CONNECT), "GET", NEXT_OFF, false],
  [
    failure("client-closed", HEADER),
    "GET",
    DEFAULT | NEXT_NON_IDEMPOTENT,
    false,
  ],
];

Deno.test("shouldTryNext() follows ngx_http_upstream_next's mask test", () => {
  for (const [error, method, mask, expected] of FAILURES) {
    strictEqual(
      shouldTryNext(error, method, mask),
      expected,
      `${error.kind} ${error.action} ${method} ${mask.toString(16)}`,
    );
  }
});

/** [status, method, bits, dropped, counted against max_fails] */
const ANSWERS: [number, string, number, boolean, boolean][] = [
  [502, "GET", HTTP_502, true, true],
  [502, "GET", DEFAULT, false, false],
  [502, "POST", HTTP_502, false, false],
  [502, "POST", HTTP_502 | NEXT_NON_IDEMPOTENT, true, true],
  [404, "GET", HTTP_404, true, false],
  [404, "GET", HTTP_502, false, false],
  [501, "GET", 0x7f0, false, false],
  [200, "GET", 0x7f0, false, false],
];

Deno.test("dropsAnswer() follows ngx_http_upstream_test_next; 403 and 404 are no failure", () => {
  for (const [status, method, mask, dropped, failed] of ANSWERS) {
    const bit = dropsAnswer(status, method, mask);
    strictEqual(bit !== 0, dropped, `${status} ${method}`);
    if (dropped) strictEqual(droppedIsFailure(bit), failed, `${status}`);
  }
  for (const word of ["http_500", "http_503", "http_504", "http_429"]) {
    const mask = readNextUpstream([word], { module: "proxy" }).mask;
    const bit = dropsAnswer(Number(word.slice(5)), "GET", mask);
    strictEqual(droppedIsFailure(bit), true, word);
  }
  const forbidden = readNextUpstream(["http_403"], { module: "proxy" }).mask;
  strictEqual(droppedIsFailure(dropsAnswer(403, "GET", forbidden)), false);
});

Deno.test("readNextUpstream() reads words as ngx_conf_set_bitmask_slot", () => {
  deepStrictEqual(readNextUpstream(["Error", "TIMEOUT"], { module: "proxy" }), {
    mask: DEFAULT,
    invalid: null,
    duplicates: [],
  });
  deepStrictEqual(
    readNextUpstream(["error", "error", "bad", "later"], { module: "proxy" }),
    { mask: NEXT_ERROR, invalid: "bad", duplicates: ["error"] },
  );
  strictEqual(
    readNextUpstream(["timeout"], { module: "proxy", mask: NEXT_ERROR }).mask,
    DEFAULT,
  );
  strictEqual(
    readNextUpstream(["http_504"], { module: "fastcgi" }).invalid,
    "http_504",
  );
  strictEqual(nextUpstreamMask(NEXT_ERROR | NEXT_OFF), NEXT_OFF);
  strictEqual(nextUpstreamMask(DEFAULT), DEFAULT);
});
