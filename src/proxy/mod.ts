/**
 * The `/api/` path: one request forwarded upstream or tunnelled as a
 * WebSocket, the headers rewritten both ways, failures turned into nginx's
 * error pages.
 *
 * @module
 */

export {
  createForwarder,
  forwardApi,
  publicOrigin,
  tooLarge,
} from "./api_forward.ts";
export type { ApiForwarder, RequestEvent } from "./api_forward.ts";
