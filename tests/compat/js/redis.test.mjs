// @upstash/redis, unchanged, against the sandbox's key-value area: `Redis.fromEnv()` as an app builds
// it (UPSTASH_REDIS_REST_URL / _TOKEN), with its defaults (base64 replies, automatic JSON
// (de)serialization). Every key starts with "js:redis:" and a random part, so the file shares the
// sandbox with the others without collisions.
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { test } from "node:test";

import { Redis } from "@upstash/redis";

// 1.39 auto-pipelines by default: concurrent commands of this client go out as one pipeline
const redis = Redis.fromEnv();
const { UPSTASH_REDIS_REST_URL: url, UPSTASH_REDIS_REST_TOKEN: token } = process.env;
// one request per command (the bitfield builder is not served through the auto-pipeline proxy)
const plain = new Redis({ url, token, enableAutoPipelining: false });

const key = (name = "k") => `js:redis:${name}:${randomUUID().slice(0, 10)}`;
const sha1 = (text) => createHash("sha1").update(text).digest("hex");

// values a user stores that a naive REST layer breaks: unicode, path and query characters, control
// characters, a lone "OK", the empty string
const AWKWARD = ["héllo wörld ✓ 日本語 🎉", "a/b%2Fc?d=e&f#g", "line\nbreak\ttab\x7f", "OK", "", " "];

// -- strings and keys ----------------------------------------------------------------------------
test("a user stores awkward strings and reads them back unchanged", async () => {
  for (const value of AWKWARD) {
    const k = key();
    assert.equal(await redis.set(k, value), "OK");
    assert.equal(await redis.get(k), value);
    assert.equal(await redis.strlen(k), Buffer.byteLength(value));
  }
});

test("a user stores an object and a number and gets them back deserialized", async () => {
  const k = key();
  await redis.set(k, { name: "Ada", langs: ["en", "日本語"], n: 1 });
  assert.deepEqual(await redis.get(k), { name: "Ada", langs: ["en", "日本語"], n: 1 });
  await redis.set(k, 42);
  assert.equal(await redis.get(k), 42);
  assert.equal(await redis.get(key("absent")), null);
});

test("a user runs the string commands: NX, GET, APPEND, GETRANGE, INCR, MSET, MGET", async () => {
  const k = key(), n = key("n"), f = key("f");
  assert.equal(await redis.set(k, "v", { nx: true }), "OK");
  assert.equal(await redis.set(k, "w", { nx: true }), null);
  assert.equal(await redis.set(k, "w", { get: true }), "v");
  assert.equal(await redis.append(k, "xyz"), 4);
  assert.equal(await redis.getrange(k, 1, 2), "xy");
  assert.equal(await redis.incr(n), 1);
  assert.equal(await redis.incrby(n, 41), 42);
  assert.equal(await redis.decr(n), 41);
  assert.equal(await redis.incrbyfloat(f, 1.5), 1.5);
  assert.equal(await redis.mset({ [`${k}a`]: "one", [`${k}b`]: "two" }), "OK");
  assert.deepEqual(await redis.mget(`${k}a`, `${k}missing`, `${k}b`), ["one", null, "two"]);
});

test("a user sets expiries and reads TTLs", async () => {
  const k = key();
  await redis.set(k, "v");
  assert.equal(await redis.ttl(k), -1);
  assert.equal(await redis.expire(k, 100), 1);
  const ttl = await redis.ttl(k);
  assert.ok(ttl > 0 && ttl <= 100, `ttl ${ttl}`);
  const pttl = await redis.pttl(k);
  assert.ok(pttl > 0 && pttl <= 100_000, `pttl ${pttl}`);
  assert.equal(await redis.persist(k), 1);
  assert.equal(await redis.ttl(k), -1);
  await redis.set(k, "v", { ex: 50 });
  assert.ok((await redis.ttl(k)) <= 50);
  assert.equal(await redis.ttl(key("absent")), -2);
});

test("a user checks, types, renames and deletes keys", async () => {
  const k = key(), other = key();
  await redis.set(k, "v");
  await redis.rpush(other, "x");
  assert.equal(await redis.exists(k, other, key("absent")), 2);
  assert.equal(await redis.type(k), "string");
  assert.equal(await redis.type(other), "list");
  assert.equal(await redis.rename(k, `${k}:new`), "OK");
  assert.equal(await redis.get(`${k}:new`), "v");
  assert.equal(await redis.del(`${k}:new`, other, key("absent")), 2);
  assert.equal(await redis.exists(`${k}:new`, other), 0);
});

test("a user scans every key of a pattern with SCAN MATCH COUNT", async () => {
  const prefix = key("scan");
  const wanted = new Set(Array.from({ length: 25 }, (_, i) => `${prefix}:${i}`));
  await redis.mset(Object.fromEntries([...wanted].map((k) => [k, "1"])));
  const found = new Set();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, { match: `${prefix}:*`, count: 7 });
    keys.forEach((k) => found.add(k));
    cursor = String(next);
  } while (cursor !== "0");
  assert.deepEqual([...found].sort(), [...wanted].sort());
});

// -- data types ------------------------------------------------------------------------------------
test("a user stores and reads a hash", async () => {
  const k = key();
  assert.equal(await redis.hset(k, { name: "Ada", lang: "日本語", empty: "" }), 3);
  assert.equal(await redis.hset(k, { name: "Grace" }), 0);
  assert.equal(await redis.hget(k, "name"), "Grace");
  assert.deepEqual(await redis.hgetall(k), { name: "Grace", lang: "日本語", empty: "" });
  assert.equal(await redis.hincrby(k, "visits", 3), 3);
  assert.deepEqual((await redis.hkeys(k)).sort(), ["empty", "lang", "name", "visits"]);
  assert.deepEqual(await redis.hmget(k, "name", "nope"), { name: "Grace", nope: null });
  assert.equal(await redis.hexists(k, "lang"), 1);
  assert.equal(await redis.hdel(k, "empty"), 1);
  assert.equal(await redis.hlen(k), 3);
  assert.equal(await redis.hgetall(key("absent")), null);
});

test("a user pushes, pops and reads a list", async () => {
  const k = key();
  assert.equal(await redis.rpush(k, "a", "b", "c"), 3);
  assert.equal(await redis.lpush(k, "z"), 4);
  assert.deepEqual(await redis.lrange(k, 0, -1), ["z", "a", "b", "c"]);
  assert.equal(await redis.lpop(k), "z");
  assert.equal(await redis.rpop(k), "c");
  assert.equal(await redis.lindex(k, 1), "b");
  assert.equal(await redis.llen(k), 2);
  assert.equal(await redis.lset(k, 0, "A"), "OK");
  assert.equal(await redis.lpos(k, "b"), 1);
  assert.deepEqual(await redis.lrange(k, 0, -1), ["A", "b"]);
});

test("a user adds to sets and intersects them", async () => {
  const k = key(), other = key();
  assert.equal(await redis.sadd(k, "a", "b", "c"), 3);
  assert.equal(await redis.sadd(k, "a"), 0);
  await redis.sadd(other, "b", "c", "d");
  assert.deepEqual((await redis.smembers(k)).sort(), ["a", "b", "c"]);
  assert.equal(await redis.sismember(k, "a"), 1);
  assert.equal(await redis.sismember(k, "z"), 0);
  assert.deepEqual((await redis.sinter(k, other)).sort(), ["b", "c"]);
  assert.deepEqual((await redis.sunion(k, other)).sort(), ["a", "b", "c", "d"]);
  assert.equal(await redis.scard(k), 3);
  assert.equal(await redis.srem(k, "a"), 1);
});

test("a user ranks members in a sorted set", async () => {
  const k = key();
  assert.equal(await redis.zadd(k, { score: 30, member: "ada" }, { score: 20, member: "bob" },
    { score: 10.5, member: "cy" }), 3);
  assert.deepEqual(await redis.zrange(k, 0, -1), ["cy", "bob", "ada"]);
  assert.deepEqual(await redis.zrange(k, 0, -1, { rev: true, withScores: true }),
    ["ada", 30, "bob", 20, "cy", 10.5]);
  assert.deepEqual(await redis.zrange(k, 15, 25, { byScore: true }), ["bob"]);
  assert.equal(await redis.zscore(k, "cy"), 10.5);
  assert.equal(await redis.zincrby(k, 5, "cy"), 15.5);
  assert.equal(await redis.zrank(k, "cy"), 0);
  assert.equal(await redis.zcard(k), 3);
  assert.equal(await redis.zadd(k, { xx: true }, { score: 1, member: "nobody" }), 0);
  assert.equal(await redis.zrem(k, "bob"), 1);
});

test("a user appends to a stream and reads it back", async () => {
  const k = key();
  const first = await redis.xadd(k, "*", { event: "signup", user: "ada" });
  const second = await redis.xadd(k, "*", { event: "login", user: "ada" });
  assert.match(first, /^\d+-\d+$/);
  assert.equal(await redis.xlen(k), 2);
  assert.deepEqual(await redis.xrange(k, "-", "+"), {
    [first]: { event: "signup", user: "ada" },
    [second]: { event: "login", user: "ada" },
  });
  assert.deepEqual(Object.keys(await redis.xrevrange(k, "+", "-")), [second, first]);
  const read = await redis.xread(k, "0-0");
  assert.equal(read[0][0], k);
  assert.equal(read[0][1].length, 2);
  assert.equal(await redis.xdel(k, first), 1);
  assert.equal(await redis.xlen(k), 1);
});

test("a user sets and counts bits of a bitmap", async () => {
  const k = key();
  assert.equal(await redis.setbit(k, 7, 1), 0);
  assert.equal(await redis.setbit(k, 7, 1), 1);
  await redis.setbit(k, 9, 1);
  assert.equal(await redis.getbit(k, 7), 1);
  assert.equal(await redis.getbit(k, 8), 0);
  assert.equal(await redis.bitcount(k), 2);
  assert.equal(await redis.bitpos(k, 1), 7);
  assert.deepEqual(await plain.bitfield(k).set("u8", 16, 255).get("u8", 16).incrby("u8", 16, 2).exec(),
    [0, 255, 1]);
});

test("a user counts distinct items with a HyperLogLog", async () => {
  const a = key(), b = key(), both = key();
  assert.equal(await redis.pfadd(a, "x", "y", "z"), 1);
  assert.equal(await redis.pfadd(a, "x"), 0);
  await redis.pfadd(b, "z", "w");
  assert.equal(await redis.pfcount(a), 3);
  assert.equal(await redis.pfmerge(both, a, b), "OK");
  assert.equal(await redis.pfcount(both), 4);
});

test("a user stores places and measures distances with geo commands", async () => {
  const k = key();
  assert.equal(await redis.geoadd(k, { longitude: 10.75, latitude: 59.91, member: "oslo" },
    { longitude: 5.32, latitude: 60.39, member: "bergen" }), 2);
  const km = await redis.geodist(k, "oslo", "bergen", "KM");
  assert.ok(km > 290 && km < 320, `distance ${km}`);
  const [pos] = await redis.geopos(k, "oslo");
  assert.ok(Math.abs(pos.lng - 10.75) < 0.001 && Math.abs(pos.lat - 59.91) < 0.001, JSON.stringify(pos));
});

// -- JSON --------------------------------------------------------------------------------------------
test("a user stores a JSON document and edits it with redis.json", async () => {
  const k = key();
  assert.equal(await redis.json.set(k, "$", { title: "svckit", tags: ["kv"], n: 1, nested: { ok: true } }), "OK");
  assert.deepEqual(await redis.json.get(k), { title: "svckit", tags: ["kv"], n: 1, nested: { ok: true } });
  assert.deepEqual(await redis.json.get(k, "$.tags"), [["kv"]]);
  assert.deepEqual(await redis.json.arrappend(k, "$.tags", '"json"'), [2]);
  assert.deepEqual(await redis.json.numincrby(k, "$.n", 41), [42]);
  assert.deepEqual(await redis.json.type(k, "$.title"), ["string"]);
  assert.equal(await redis.json.set(k, "$.nested.ok", '"no"'), "OK");
  assert.deepEqual(await redis.json.get(k, "$.nested"), [{ ok: "no" }]);
  assert.equal(await redis.json.del(k, "$.nested"), 1);
  assert.deepEqual(await redis.json.get(k), { title: "svckit", tags: ["kv", "json"], n: 42 });
});

test("a user stores booleans: the SDK sends them as JSON true / false arguments", async () => {
  // the SDK's serializer passes a boolean argument through as a JSON boolean in the request body
  const k = key();
  assert.equal(await plain.set(k, true), "OK");
  assert.equal(await plain.get(k), true);
  assert.equal(await plain.json.set(`${k}:doc`, "$", { ok: true }), "OK");
  assert.equal(await plain.json.set(`${k}:doc`, "$.ok", false), "OK");
  assert.deepEqual(await plain.json.get(`${k}:doc`), { ok: false });
});

// -- batches -------------------------------------------------------------------------------------------
test("a user sends a pipeline and gets every reply in order", async () => {
  const k = key();
  const replies = await redis.pipeline()
    .set(k, "1")
    .incr(k)
    .get(k)
    .hset(`${k}:h`, { a: "é" })
    .hgetall(`${k}:h`)
    .exec();
  assert.deepEqual(replies, ["OK", 2, 2, 1, { a: "é" }]);
});

test("a pipeline with a failing command rejects, and keepErrors returns each result or error", async () => {
  const k = key();
  await redis.set(k, "text");
  await assert.rejects(redis.pipeline().set(`${k}:a`, "1").incr(k).exec(), /not an integer/);
  assert.equal(await redis.get(`${k}:a`), 1); // the other commands of the pipeline ran
  const replies = await redis.pipeline().set(`${k}:b`, "2").incr(k).get(`${k}:b`).exec({ keepErrors: true });
  assert.equal(replies.length, 3);
  assert.deepEqual(replies[0], { result: "OK", error: undefined });
  assert.equal(replies[1].result, undefined);
  assert.match(replies[1].error, /not an integer/);
  assert.deepEqual(replies[2], { result: 2, error: undefined });
});

test("a user runs a multi() transaction", async () => {
  const k = key();
  const replies = await redis.multi().set(k, "10").incrby(k, 5).lpush(`${k}:l`, "x", "y").lrange(`${k}:l`, 0, -1)
    .exec();
  assert.deepEqual(replies, ["OK", 15, 2, ["y", "x"]]);
  assert.equal(await redis.get(k), 15);
});

test("auto-pipelining batches many concurrent commands and answers each one", async () => {
  const auto = new Redis({ url, token, enableAutoPipelining: true });
  const k = key("auto");
  const writes = await Promise.all(Array.from({ length: 20 }, (_, i) => auto.set(`${k}:${i}`, `v${i}`)));
  assert.deepEqual(writes, Array(20).fill("OK"));
  const [reads, count, hash] = await Promise.all([
    Promise.all(Array.from({ length: 20 }, (_, i) => auto.get(`${k}:${i}`))),
    auto.incrby(`${k}:n`, 7),
    auto.hset(`${k}:h`, { f: "1" }).then(() => auto.hgetall(`${k}:h`)),
  ]);
  assert.deepEqual(reads, Array.from({ length: 20 }, (_, i) => `v${i}`));
  assert.equal(count, 7);
  assert.deepEqual(hash, { f: 1 });
  assert.ok(auto.pipelineCounter >= 1 && auto.pipelineCounter < 40, `${auto.pipelineCounter} pipelines`);
});

// -- scripts ---------------------------------------------------------------------------------------------
const SCRIPT = 'redis.call("SET", KEYS[1], ARGV[1]); return redis.call("GET", KEYS[1])';

test("a user runs a script with eval, loads it with scriptLoad and runs it with evalsha", async () => {
  const k = key();
  assert.equal(await redis.eval(SCRIPT, [k], ["é"]), "é");
  const sha = await redis.scriptLoad(SCRIPT);
  assert.equal(sha, sha1(SCRIPT));
  assert.equal(await redis.evalsha(sha, [k], ["again"]), "again");
  assert.deepEqual(await redis.scriptExists(sha, "0".repeat(40)), [1, 0]);
  await assert.rejects(redis.evalsha("f".repeat(40), [], []), /NOSCRIPT/);
});

test("a user runs a script made with redis.createScript, and a read-only one", async () => {
  const k = key();
  const incr = redis.createScript('return redis.call("INCRBY", KEYS[1], ARGV[1])');
  assert.equal(await incr.exec([k], ["2"]), 2); // EVALSHA first, EVAL when the script is not loaded yet
  assert.equal(await incr.exec([k], ["3"]), 5); // now loaded: EVALSHA alone
  assert.equal(await incr.eval([k], ["1"]), 6);
  assert.equal(await incr.evalsha([k], ["1"]), 7);
  const read = redis.createScript('return redis.call("GET", KEYS[1])', { readonly: true });
  assert.equal(await read.evalRo([k], []), 7);
  assert.equal(await read.exec([k], []), 7);
});

// -- tokens and errors -----------------------------------------------------------------------------------
test("the read-only token reads, and a write with it is refused", async () => {
  const k = key();
  await redis.set(k, "public");
  const reader = new Redis({ url, token: process.env.KV_REST_API_READ_ONLY_TOKEN });
  assert.equal(await reader.get(k), "public");
  assert.deepEqual(await reader.mget(k, key("absent")), ["public", null]);
  await assert.rejects(reader.set(k, "changed"), (err) => {
    assert.match(String(err), /NOPERM|read.?only|not allowed/i);
    return true;
  });
  assert.equal(await redis.get(k), "public");
});

test("the errors a user sees: WRONGTYPE, unknown command, a wrong token", async () => {
  const k = key();
  await redis.set(k, "text");
  await assert.rejects(redis.lpush(k, "x"), /WRONGTYPE/);
  await assert.rejects(redis.exec(["NOSUCHCOMMAND", k]), /unknown command/i);
  const wrong = new Redis({ url, token: "not-the-token" });
  await assert.rejects(wrong.get(k), /Unauthorized|401/);
});
