// @upstash/lock, unchanged, over `Redis.fromEnv()` against the sandbox's key-value area: SET NX PX to
// acquire, Lua scripts (EVAL) to extend and release. Every lock id starts with "js:lock:" and a random
// part.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { Lock } from "@upstash/lock";
import { Redis } from "@upstash/redis";

const redis = Redis.fromEnv();
const lockId = () => `js:lock:${randomUUID().slice(0, 10)}`;
// a contender tries twice, 20 ms apart, instead of the default three times 100 ms apart
const RETRY = { attempts: 2, delay: 20 };
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test("a user acquires a free lock and holds it", async () => {
  const lock = new Lock({ id: lockId(), redis, lease: 10_000 });
  assert.equal(await lock.getStatus(), "FREE");
  assert.equal(await lock.acquire(), true);
  assert.equal(await lock.getStatus(), "ACQUIRED");
  const pttl = await redis.pttl(lock.id);
  assert.ok(pttl > 9_000 && pttl <= 10_000, `pttl ${pttl}`);
  assert.equal(await lock.release(), true);
});

test("a second acquire of a held lock is refused until the holder releases it", async () => {
  const id = lockId();
  const holder = new Lock({ id, redis, lease: 10_000 });
  const contender = new Lock({ id, redis, lease: 10_000, retry: RETRY });
  assert.equal(await holder.acquire(), true);
  assert.equal(await contender.acquire(), false);
  assert.equal(await contender.getStatus(), "FREE");
  assert.equal(await contender.release(), false); // not the holder: nothing is released
  assert.equal(await holder.getStatus(), "ACQUIRED");
  assert.equal(await holder.release(), true);
  assert.equal(await holder.getStatus(), "FREE");
  assert.equal(await contender.acquire(), true);
  assert.equal(await contender.getStatus(), "ACQUIRED");
  assert.equal(await holder.acquire({ retry: RETRY }), false);
  assert.equal(await contender.release(), true);
});

test("the holder extends its lease", async () => {
  const lock = new Lock({ id: lockId(), redis, lease: 5_000 });
  assert.equal(await lock.acquire(), true);
  assert.equal(await lock.extend(20_000), true);
  const ttl = await redis.ttl(lock.id);
  assert.ok(ttl > 20 && ttl <= 25, `ttl ${ttl}`);
  const other = new Lock({ id: lock.id, redis, retry: RETRY });
  assert.equal(await other.extend(20_000), false); // only the holder may extend
  assert.equal(await lock.release(), true);
  assert.equal(await lock.extend(1_000), false); // released: nothing to extend
});

test("a lock whose lease ran out can be acquired by another", async () => {
  const id = lockId();
  const holder = new Lock({ id, redis, lease: 200 });
  assert.equal(await holder.acquire(), true);
  const deadline = Date.now() + 5_000; // the 200 ms lease runs out on the server's clock: poll for it
  while ((await holder.getStatus()) !== "FREE") {
    assert.ok(Date.now() < deadline, "the lease never ran out");
    await pause(25);
  }
  const next = new Lock({ id, redis, lease: 10_000, retry: RETRY });
  assert.equal(await next.acquire(), true);
  assert.equal(await holder.release(), false); // its lease ended: it must not free the new holder's lock
  assert.equal(await next.getStatus(), "ACQUIRED");
  assert.equal(await next.release(), true);
});
