/**
 * TLS for the gateway's listeners: a server's certificate and key loaded
 * and checked as nginx does at start, each failure one `[emerg]` line in
 * nginx's words.
 *
 * @module
 */

export {
  DENO_PAIR_IO,
  loadCertificatePair,
  type LoadedPair,
  type PairIo,
  PEM_MAX_BYTES,
  type TlsPem,
} from "./load.ts";
export { hasCertificate, keyKind, pemLabels } from "./pem.ts";
