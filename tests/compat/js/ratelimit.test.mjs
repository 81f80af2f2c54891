// @upstash/ratelimit 2.2, unchanged, over `Redis.fromEnv()` against the sandbox's key-value area: its
// Lua scripts run in the sandbox's Redis, and each limiter must enforce its limit exactly.
//
// Windows are long (1000 hours), so no test crosses a window boundary or waits for a refill: the
// counts are exact whatever the machine's speed. `ephemeralCache: false` makes every call reach the
// sandbox (the SDK's in-memory block list would otherwise answer "denied" by itself). Every limiter
// has the prefix "js:ratelimit" and every identifier a random part.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { Ratelimit } from "@upstash/ratelimit";
import { Redis } from "@upstash/redis";

const LIMIT = 5;
const WINDOW = "1000 h";
const WINDOW_MS = 1000 * 3600 * 1000;

const LIMITERS = {
  slidingWindow: () => Ratelimit.slidingWindow(LIMIT, WINDOW),
  fixedWindow: () => Ratelimit.fixedWindow(LIMIT, WINDOW),
  tokenBucket: () => Ratelimit.tokenBucket(1, WINDOW, LIMIT),
};

const ratelimit = (algorithm) =>
  new Ratelimit({ redis: Redis.fromEnv(), limiter: LIMITERS[algorithm](), prefix: `js:ratelimit:${algorithm}`,
    ephemeralCache: false });
const who = () => `user-${randomUUID().slice(0, 10)}`;

for (const algorithm of Object.keys(LIMITERS)) {
  test(`${algorithm}: limit() allows exactly ${LIMIT} requests, then denies`, async () => {
    const limiter = ratelimit(algorithm);
    const user = who();
    const before = Date.now();
    const answers = [];
    for (let i = 0; i < LIMIT + 2; i++) answers.push(await limiter.limit(user));
    assert.deepEqual(answers.map((a) => a.success), [...Array(LIMIT).fill(true), false, false]);
    assert.deepEqual(answers.map((a) => a.remaining), [4, 3, 2, 1, 0, 0, 0]);
    for (const answer of answers) {
      assert.equal(answer.limit, LIMIT);
      assert.ok(answer.reset > before && answer.reset <= Date.now() + WINDOW_MS, `reset ${answer.reset}`);
      await answer.pending;
    }
    const other = await limiter.limit(who()); // another identifier has a limit of its own
    assert.equal(other.success, true);
    assert.equal(other.remaining, LIMIT - 1);
  });

  test(`${algorithm}: getRemaining() reports what limit() left`, async () => {
    const limiter = ratelimit(algorithm);
    const user = who();
    assert.equal((await limiter.getRemaining(user)).remaining, LIMIT);
    await limiter.limit(user);
    await limiter.limit(user);
    const left = await limiter.getRemaining(user);
    assert.equal(left.remaining, LIMIT - 2);
    assert.equal(left.limit, LIMIT);
    assert.ok(left.reset > Date.now() - 1000, `reset ${left.reset}`);
  });

  test(`${algorithm}: resetUsedTokens() gives a denied identifier its full limit back`, async () => {
    const limiter = ratelimit(algorithm);
    const user = who(), bystander = who();
    for (let i = 0; i < LIMIT; i++) await limiter.limit(user);
    await limiter.limit(bystander);
    assert.equal((await limiter.limit(user)).success, false);
    await limiter.resetUsedTokens(user);
    assert.equal((await limiter.getRemaining(user)).remaining, LIMIT);
    const again = await limiter.limit(user);
    assert.equal(again.success, true);
    assert.equal(again.remaining, LIMIT - 1);
    assert.equal((await limiter.getRemaining(bystander)).remaining, LIMIT - 1); // untouched
  });

  test(`${algorithm}: limit() with a rate spends that many tokens at once`, async () => {
    const limiter = ratelimit(algorithm);
    const user = who();
    const first = await limiter.limit(user, { rate: 3 });
    assert.equal(first.success, true);
    assert.equal(first.remaining, LIMIT - 3);
    const second = await limiter.limit(user, { rate: 2 });
    assert.equal(second.success, true);
    assert.equal(second.remaining, 0);
    assert.equal((await limiter.limit(user)).success, false);
  });
}
