// One share of the suite in one worker: see shard.ts.
import { runShard } from "./shard.ts";

await runShard(8);
