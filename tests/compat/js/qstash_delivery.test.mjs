// @upstash/qstash 2.12, unchanged, against the sandbox as the local QStash: messages published,
// enqueued, fanned out to a URL group and scheduled, delivered to a plain node http server on
// loopback, each verified with the SDK's own Receiver and the keys `svckit sandbox --env vendor`
// prints (QSTASH_CURRENT_SIGNING_KEY, QSTASH_NEXT_SIGNING_KEY); retries into the DLQ and out with
// dlq.retry; messages.get / cancel; the events log. Every name here (paths, queue, group, label) is
// this file's own.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, test } from "node:test";

import { Client, QstashError, Receiver } from "@upstash/qstash";

import { listening } from "./helpers.mjs";

const client = new Client({ baseUrl: process.env.QSTASH_URL, token: process.env.QSTASH_TOKEN });
const receiver = new Receiver({
  currentSigningKey: process.env.QSTASH_CURRENT_SIGNING_KEY,
  nextSigningKey: process.env.QSTASH_NEXT_SIGNING_KEY,
});

// -- a destination: records every request, answers each path as told --------------------------
const seen = [];
const answers = new Map(); // path -> status
const waiters = [];
const server = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const path = req.url.split("?")[0];
  seen.push({ method: req.method, url: req.url, path, headers: req.headers, body: Buffer.concat(chunks).toString() });
  for (const w of waiters.splice(0)) w();
  res.statusCode = answers.get(path) ?? 200;
  res.end(`answer ${res.statusCode}`);
});
let base;
before(async () => {
  base = await listening(server);
});
after(() => server.close());

const at = (path) => seen.filter((d) => d.path === path);
async function waitFor(path, count = 1, ms = 10000) {
  const deadline = Date.now() + ms;
  while (at(path).length < count) {
    assert.ok(Date.now() < deadline, `${at(path).length} of ${count} deliveries to ${path} within ${ms} ms`);
    await new Promise((ok) => { waiters.push(ok); setTimeout(ok, 50); });
  }
  return at(path).slice(0, count);
}
const verified = (d, url) => receiver.verify({ signature: d.headers["upstash-signature"], body: d.body, url });

// -- tests ---------------------------------------------------------------------------------------
test("publishJSON delivers with its headers, method and a signature the Receiver accepts", async () => {
  const url = `${base}/js-orders?tenant=acme`;
  const { messageId } = await client.publishJSON({
    url, body: { order: 42 }, method: "PUT", headers: { "X-Trace": "t-1" }, retries: 1, label: "js-delivery",
  });
  const [d] = await waitFor("/js-orders");
  assert.equal(d.method, "PUT");
  assert.equal(d.url, "/js-orders?tenant=acme");
  assert.deepEqual(JSON.parse(d.body), { order: 42 });
  assert.equal(d.headers["x-trace"], "t-1");
  assert.equal(d.headers["upstash-message-id"], messageId);
  assert.equal(d.headers["upstash-retried"], "0");
  assert.equal(await verified(d, url), true);
  await assert.rejects(verified({ ...d, body: "tampered" }, url));
});

test("a delayed message can be read and canceled, and is never delivered", async () => {
  const { messageId } = await client.publish({ url: `${base}/js-later`, body: "x", delay: 3600 });
  const message = await client.messages.get(messageId);
  assert.equal(message.url, `${base}/js-later`);
  assert.equal(message.notBefore - message.createdAt, 3600000);
  assert.deepEqual(await client.messages.cancel(messageId), { cancelled: 1 });
  await assert.rejects(client.messages.get(messageId), (e) => e instanceof QstashError && e.status === 404);
  const { messageId: other } = await client.publish({ url: `${base}/js-later`, body: "y", delay: 3600 });
  assert.deepEqual(await client.messages.cancel([other]), { cancelled: 1 });
  const { events } = await client.events({ filter: { messageId } });
  assert.deepEqual(events.map((e) => e.state).reverse(), ["CREATED", "CANCELED"]);
});

test("a queue delivers in order", async () => {
  const queue = client.queue({ queueName: "js-orders" });
  await queue.upsert({ parallelism: 1 });
  for (const i of [0, 1, 2, 3]) await queue.enqueueJSON({ url: `${base}/js-in-order`, body: { i } });
  const deliveries = await waitFor("/js-in-order", 4);
  assert.deepEqual(deliveries.map((d) => JSON.parse(d.body).i), [0, 1, 2, 3]);
  const got = await queue.get();
  assert.equal(got.name, "js-orders");
  assert.equal(got.parallelism, 1);
  await queue.delete();
});

test("a URL group fans out to each endpoint", async () => {
  await client.urlGroups.addEndpoints({ name: "js-fans", endpoints: [{ url: `${base}/js-fan-a` }, { url: `${base}/js-fan-b` }] });
  const answers = await client.publishJSON({ urlGroup: "js-fans", body: { news: 1 } });
  assert.equal(answers.length, 2);
  for (const path of ["/js-fan-a", "/js-fan-b"]) {
    const [d] = await waitFor(path);
    assert.equal(d.headers["upstash-topic-name"], "js-fans");
  }
  assert.equal((await client.urlGroups.get("js-fans")).endpoints.length, 2);
  await client.urlGroups.delete("js-fans");
});

test("a schedule fires, pauses and is deleted", async () => {
  const { scheduleId } = await client.schedules.create({ destination: `${base}/js-tick`, cron: "* * * * * */1", body: "tick" });
  const [d] = await waitFor("/js-tick", 1, 10000);
  assert.equal(d.headers["upstash-schedule-id"], scheduleId);
  await client.schedules.pause({ schedule: scheduleId });
  assert.equal((await client.schedules.get(scheduleId)).isPaused, true);
  await client.schedules.delete(scheduleId);
  assert.ok(!(await client.schedules.list()).some((s) => s.scheduleId === scheduleId));
});

test("failed deliveries are retried into the DLQ, then retried out", async () => {
  answers.set("/js-down", 500);
  const { messageId } = await client.publish({ url: `${base}/js-down`, body: "p", retries: 1, label: "js-dlq" });
  await waitFor("/js-down", 2);
  let entry;
  for (let i = 0; i < 100 && !entry; i += 1) {
    entry = (await client.dlq.listMessages({ filter: { label: "js-dlq" } })).messages[0];
    if (!entry) await new Promise((ok) => setTimeout(ok, 50));
  }
  assert.equal(entry.messageId, messageId);
  assert.equal(entry.responseStatus, 500);
  answers.set("/js-down", 200);
  const { responses } = await client.dlq.retry(entry.dlqId);
  assert.equal(responses.length, 1);
  await waitFor("/js-down", 3);
});

test("a destination off this machine is refused with a 400 naming the rule", async () => {
  await assert.rejects(client.publish({ url: "https://example.com/hook", body: "x" }),
    (e) => e instanceof QstashError && e.status === 400 && /only to this machine/.test(e.message));
});
