// @upstash/qstash 2.12, unchanged, against the sandbox's queue area: the DLQ and the events log of the
// workflow runs the pytest driver made before this file ran (seed_queue in test_js_sdks.py):
//   COMPAT_FAIL_LABEL  runs of COMPAT_FAIL_URL, each failed (its failing step tried twice) and in the DLQ
//   COMPAT_OK_LABEL    runs of COMPAT_OK_URL, each succeeded (never in the DLQ)
// and their run ids (COMPAT_FAIL_RUN_IDS, COMPAT_OK_RUN_IDS, comma-separated). The labels are this
// file's own, so every assertion filters by them. The tests run in order: the delete tests last.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@upstash/qstash";

const client = new Client({ baseUrl: process.env.QSTASH_URL, token: process.env.QSTASH_TOKEN });
const env = process.env;
const FAIL_RUNS = env.COMPAT_FAIL_RUN_IDS.split(",");
const OK_RUNS = env.COMPAT_OK_RUN_IDS.split(",");
const failed = { label: env.COMPAT_FAIL_LABEL };

/** Follow the SDK's cursor to the end; every item and the number of pages. */
async function listAll(call, items) {
  const found = [];
  let cursor;
  let pages = 0;
  do {
    const page = await call(cursor);
    found.push(...page[items]);
    cursor = page.cursor;
    pages += 1;
    assert.ok(pages <= 100, "the cursor never ended");
    if (cursor) assert.ok(page[items].length > 0, "a page with a cursor is never empty");
  } while (cursor);
  return { found, pages };
}

/** The states of a delivery's outcome (a message's log also has CREATED, ACTIVE, RETRY). */
const OUTCOMES = ["DELIVERED", "ERROR", "FAILED"];
const newestFirst = (times) => assert.deepEqual(times, [...times].sort((a, b) => b - a));

// -- the DLQ ---------------------------------------------------------------------------------------
test("dlq.listMessages() with a label filter lists every failed run, newest first", async () => {
  const { messages, cursor } = await client.dlq.listMessages({ filter: failed });
  assert.equal(cursor, undefined);
  assert.equal(messages.length, FAIL_RUNS.length);
  newestFirst(messages.map((m) => m.createdAt));
  assert.deepEqual(messages.map((m) => m.workflowRunId).sort(), [...FAIL_RUNS].sort());
  for (const m of messages) {
    assert.match(m.dlqId, /\S/);
    assert.match(m.messageId, /^msg_/);
    assert.equal(m.url, env.COMPAT_FAIL_URL);
    assert.equal(m.method, "POST");
    assert.equal(m.label, env.COMPAT_FAIL_LABEL);
    assert.equal(m.maxRetries, 1);
    assert.equal(m.responseStatus, 500);
    assert.deepEqual(JSON.parse(m.responseBody), { error: "PaymentDeclined", message: "card declined: 402" });
    assert.ok(m.notBefore <= m.createdAt, `notBefore ${m.notBefore} after createdAt ${m.createdAt}`);
    assert.equal(JSON.parse(m.body).stepName, "reserve"); // the message that failed: reserve's result, whose delivery ran charge
  }
});

test("dlq.listMessages() with each filter narrows the list", async () => {
  const all = (await client.dlq.listMessages({ filter: failed })).messages;
  const dlqIds = (messages) => messages.map((m) => m.dlqId);
  const list = async (filter) => dlqIds((await client.dlq.listMessages({ filter })).messages);
  assert.deepEqual(await list({ url: env.COMPAT_FAIL_URL, ...failed }), dlqIds(all));
  assert.deepEqual(await list({ url: env.COMPAT_OK_URL }), []); // runs that succeeded are never in the DLQ
  assert.deepEqual(await list({ label: env.COMPAT_OK_LABEL }), []);
  assert.deepEqual(await list({ responseStatus: 500, ...failed }), dlqIds(all));
  assert.deepEqual(await list({ responseStatus: 404, ...failed }), []);
  assert.deepEqual(await list({ messageId: all[1].messageId }), [all[1].dlqId]);
  const times = all.map((m) => m.createdAt).sort((a, b) => a - b);
  assert.deepEqual(await list({ fromDate: times[1], ...failed }), dlqIds(all.filter((m) => m.createdAt >= times[1])));
  assert.deepEqual(await list({ toDate: new Date(times[0]), ...failed }),
    dlqIds(all.filter((m) => m.createdAt <= times[0])));
  assert.deepEqual(await list({ urlGroup: "orders", ...failed }), []); // nothing is published to a URL group
});

test("dlq.listMessages() with a count pages through the list with its cursor", async () => {
  const all = (await client.dlq.listMessages({ filter: failed })).messages;
  const { found, pages } = await listAll(
    (cursor) => client.dlq.listMessages({ filter: failed, count: 1, cursor }), "messages");
  assert.deepEqual(found.map((m) => m.dlqId), all.map((m) => m.dlqId));
  assert.equal(pages, all.length);
  const two = await client.dlq.listMessages({ filter: failed, count: 2 });
  assert.equal(two.messages.length, 2);
  assert.ok(two.cursor);
});

test("dlq.listMessages() with dlqIds lists exactly those entries", async () => {
  const all = (await client.dlq.listMessages({ filter: failed })).messages;
  const wanted = [all[0].dlqId, all[2].dlqId];
  const { messages } = await client.dlq.listMessages({ dlqIds: wanted });
  assert.deepEqual(messages.map((m) => m.dlqId).sort(), [...wanted].sort());
});

test("dlq.listMessages() with a filter of several labels matches any of them", async () => {
  for (const label of [[env.COMPAT_OK_LABEL, env.COMPAT_FAIL_LABEL], [env.COMPAT_FAIL_LABEL, env.COMPAT_OK_LABEL]]) {
    const { messages } = await client.dlq.listMessages({ filter: { label } });
    assert.deepEqual(messages.map((m) => m.workflowRunId).sort(), [...FAIL_RUNS].sort(), `label ${label}`);
  }
});

// -- the events log ----------------------------------------------------------------------------------
test("logs() with a label filter returns each message's states, newest first", async () => {
  const byRun = async (label) => {
    const { found } = await listAll((cursor) => client.logs({ filter: { label }, cursor }), "logs");
    newestFirst(found.map((log) => log.time));
    const runs = {};
    for (const log of found) {
      assert.equal(log.label, label);
      assert.match(log.messageId, /^msg_/);
      if (OUTCOMES.includes(log.state)) (runs[log.workflowRunId] ??= []).push(log.state);
    }
    return runs;
  };
  const failedRuns = await byRun(env.COMPAT_FAIL_LABEL);
  assert.deepEqual(Object.keys(failedRuns).sort(), [...FAIL_RUNS].sort());
  for (const states of Object.values(failedRuns)) {
    // the initial call delivered; the delivery of "reserve"'s result, which runs "charge", failed once
    // (ERROR: a retry follows), then for good
    assert.deepEqual([...states].sort(), ["DELIVERED", "ERROR", "FAILED"]);
  }
  const okRuns = await byRun(env.COMPAT_OK_LABEL);
  assert.deepEqual(Object.keys(okRuns).sort(), [...OK_RUNS].sort());
  for (const states of Object.values(okRuns)) assert.deepEqual(states, ["DELIVERED", "DELIVERED"]);
});

test("logs() with a state, url or messageIds filter, and events() its older name", async () => {
  const { logs } = await client.logs({ filter: { ...failed, state: "FAILED" } });
  assert.equal(logs.length, FAIL_RUNS.length);
  for (const log of logs) {
    assert.equal(log.state, "FAILED");
    assert.match(log.error, /PaymentDeclined: card declined: 402/);
    assert.equal(log.url, env.COMPAT_FAIL_URL);
  }
  assert.deepEqual((await client.logs({ filter: { ...failed, url: env.COMPAT_OK_URL } })).logs, []);
  const ok = (await client.logs({ filter: { label: env.COMPAT_OK_LABEL, url: env.COMPAT_OK_URL } })).logs;
  assert.equal(ok.filter((log) => log.state === "DELIVERED").length, 2 * OK_RUNS.length);
  const charge = logs[0].messageId; // both attempts of the failed step carry its message id
  const { logs: attempts } = await client.logs({ messageIds: [charge] });
  assert.deepEqual(attempts.map((log) => log.state).filter((s) => OUTCOMES.includes(s)).sort(), ["ERROR", "FAILED"]);
  assert.ok(attempts.every((log) => log.messageId === charge));
  const { events } = await client.events({ filter: { ...failed, state: "ERROR" } });
  assert.equal(events.length, FAIL_RUNS.length);
});

test("logs() with a filter of several labels matches any of them", async () => {
  const both = (await client.logs({ filter: { label: [env.COMPAT_FAIL_LABEL, env.COMPAT_OK_LABEL] } })).logs;
  const runs = new Set(both.map((log) => log.workflowRunId));
  assert.deepEqual([...runs].sort(), [...FAIL_RUNS, ...OK_RUNS].sort());
});

test("logs() with a count pages through the log with its cursor", async () => {
  const all = (await client.logs({ filter: failed })).logs;
  const { found, pages } = await listAll((cursor) => client.logs({ filter: failed, count: 5, cursor }), "logs");
  assert.deepEqual(found.map((log) => [log.time, log.messageId, log.state]),
    all.map((log) => [log.time, log.messageId, log.state]));
  assert.equal(pages, Math.ceil(all.length / 5));
});

// -- deleting from the DLQ (last: they consume the entries) --------------------------------------------
test("dlq.delete(id) removes one entry, and a second delete of it is refused", async () => {
  const [first] = (await client.dlq.listMessages({ filter: failed })).messages;
  assert.deepEqual(await client.dlq.delete(first.dlqId), { deleted: 1 });
  const left = (await client.dlq.listMessages({ filter: failed })).messages;
  assert.equal(left.length, FAIL_RUNS.length - 1);
  assert.ok(!left.some((m) => m.dlqId === first.dlqId));
  await assert.rejects(client.dlq.delete(first.dlqId), (err) => {
    assert.equal(err.status, 404);
    return true;
  });
});

test("dlq.deleteMany({ dlqIds }) removes those entries and counts only the ones that existed", async () => {
  const left = (await client.dlq.listMessages({ filter: failed })).messages.map((m) => m.dlqId);
  assert.ok(left.length >= 2, `${left.length} entries left`);
  const [one, ...rest] = left;
  assert.deepEqual(await client.dlq.deleteMany({ dlqIds: [one, "dlq_unknown"] }), { deleted: 1 });
  assert.deepEqual(await client.dlq.delete(rest), { deleted: rest.length }); // the array form
  assert.deepEqual((await client.dlq.listMessages({ filter: failed })).messages, []);
  assert.deepEqual(await client.dlq.delete([]), { deleted: 0 }); // the SDK sends nothing
});
