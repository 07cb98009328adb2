/**
 * How a server is reached, in the configuration model (`model.ts`): its
 * `listen` addresses and its `server_name`s as nginx classifies them
 * (`ngx_http_core_module`).
 *
 * @module
 */

/** One `listen` of a server. */
export interface Listen {
  /** The address to bind (`0.0.0.0`, `::`, `127.0.0.1`). */
  hostname: string;
  /** The port. */
  port: number;
  /** `default_server`: answers names no server on this address claims. */
  defaultServer: boolean;
  /** `ssl`. */
  ssl: boolean;
  /** `http2`. */
  http2: boolean;
  /** The text as written, for messages. */
  text: string;
}

/** A `server_name`, classified as `ngx_http_server_names` does. */
export type ServerName =
  | { kind: "exact"; name: string }
  // `*.example.com` (subdomains only) or `.example.com` (`bare`: the name
  // itself too).
  | { kind: "leading"; suffix: string; bare: boolean }
  | { kind: "trailing"; prefix: string } // `www.example.*`
  | { kind: "regex"; regex: RegExp; text: string };
