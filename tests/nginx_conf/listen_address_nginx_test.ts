/**
 * A `listen` address beside nginx 1.22 running the same nginx.conf: it is
 * read as `ngx_parse_url` reads it (`ngx_inet_addr`: decimal octets with
 * leading zeros), so `127.0.0.010` is 127.0.0.10, not 127.0.0.8 as the
 * system's resolver (`inet_aton`) would read it.
 */
import { deepStrictEqual } from "node:assert/strict";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";

function conf(port: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.010:${port};
    location / { return 200 "ok\\n"; }
  }
}
`;
}

/** The status line of a GET sent to 127.0.0.10, or the connect's failure. */
async function statusAt(port: number): Promise<string> {
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.10", port });
  } catch (error) {
    return (error as Error).name;
  }
  try {
    await conn.write(
      new TextEncoder().encode(
        "GET / HTTP/1.1\r\nHost: station\r\nConnection: close\r\n\r\n",
      ),
    );
    const text = await new Response(conn.readable).text();
    return text.slice(0, text.indexOf("\r\n"));
  } catch (error) {
    conn.close();
    return (error as Error).name;
  }
}

Deno.test("listen 127.0.0.010 binds 127.0.0.10, as nginx 1.22 does", async () => {
  await using both = await bothSides(conf);
  const { nginx: theirs, gateway: ours } = both;
  deepStrictEqual(await statusAt(theirs.port), "HTTP/1.1 200 OK");
  deepStrictEqual(await statusAt(ours.port), "HTTP/1.1 200 OK");
});
