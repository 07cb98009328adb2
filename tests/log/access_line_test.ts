import { strictEqual } from "node:assert/strict";
import { rawRequest, refusedPort, startGateway, waitFor } from "../_utils.ts";

Deno.test('the access line prints an empty Referer and User-Agent as "" and absent ones as -, as nginx', async () => {
  await using gateway = await startGateway({
    upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
  });
  await rawRequest(
    gateway.port,
    "GET /none HTTP/1.1\r\nHost: station\r\nReferer:\r\nUser-Agent: \r\nConnection: close\r\n\r\n",
  );
  await rawRequest(
    gateway.port,
    "GET /none HTTP/1.1\r\nHost: station\r\nConnection: close\r\n\r\n",
  );
  await waitFor(() => gateway.accessLines.length === 2);
  strictEqual(
    / 404 \d+ "" ""$/.test(gateway.accessLines[0]!),
    true,
    gateway.accessLines[0],
  );
  strictEqual(
    / 404 \d+ "-" "-"$/.test(gateway.accessLines[1]!),
    true,
    gateway.accessLines[1],
  );
});
