// @upstash/workflow's Client, unchanged, against the sandbox: every method that reads or acts on runs
// and the DLQ (trigger, logs, cancel, dlq.list / resume / restart / delete / retryFailureFunction),
// in each of its call forms. The workflows are Python functions registered in the sandbox
// (tests/compat/workflows.py): "flaky" fails the first run of each run id, "slow" waits a minute,
// "callback" fails and has a failure function that fails once, then succeeds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@upstash/workflow";

import { until as untilWithin } from "./helpers.mjs";

const client = new Client({ baseUrl: process.env.QSTASH_URL, token: process.env.QSTASH_TOKEN });
const { COMPAT_FLAKY_URL: FLAKY, COMPAT_SLOW_URL: SLOW, COMPAT_CALLBACK_URL: CALLBACK } = process.env;
let labels = 0;
const newLabel = (what) => `wf-${what}-${++labels}-${Date.now()}`;

/** Poll `read` until `done(value)`, for at most 15 s (runs are delivered in the background). */
const until = (read, done, what) => untilWithin(read, done, what, 15_000);

/** Start `n` runs of `url` with Client.trigger, labelled `label`, no retries. */
async function start(url, label, n) {
  const runs = await client.trigger(
    Array.from({ length: n }, (_, i) => ({ url, body: { order: i }, label, retries: 0 })),
  );
  return runs.map((r) => r.workflowRunId);
}

const inDlq = (label) =>
  until(
    async () => (await client.dlq.list({ filter: { label } })).messages,
    (messages) => messages.length > 0,
    `runs labelled ${label} in the DLQ`,
  );

async function failedRuns(label, n) {
  await start(FLAKY, label, n);
  return until(
    async () => (await client.dlq.list({ filter: { label } })).messages,
    (messages) => messages.length === n,
    `${n} runs labelled ${label} in the DLQ`,
  );
}

const runsOf = async (label) => (await client.logs({ filter: { label }, count: 10 })).runs;
const settled = (label, state, n) =>
  until(() => runsOf(label), (runs) => runs.filter((r) => r.workflowState === state).length === n,
    `${n} runs labelled ${label} in ${state}`);

test("trigger starts runs of a registered workflow, one or a batch", async () => {
  const label = newLabel("trigger");
  const one = await client.trigger({ url: FLAKY, body: { order: 1 }, label, workflowRunId: "trigger-one" });
  assert.equal(one.workflowRunId, "wfr_trigger-one");
  const many = await start(FLAKY, label, 2);
  assert.equal(many.length, 2);
  const runs = await settled(label, "RUN_FAILED", 3);
  assert.deepEqual(new Set(runs.map((r) => r.workflowRunId)), new Set(["wfr_trigger-one", ...many]));
  assert.equal(runs.find((r) => r.workflowRunId === "wfr_trigger-one").label, label);
});

test("logs pages through runs with a filter, a legacy run-id filter and a state filter", async () => {
  const label = newLabel("logs");
  const ids = await start(FLAKY, label, 3);
  await settled(label, "RUN_FAILED", 3);
  const seen = [];
  let cursor;
  do {
    const page = await client.logs({ filter: { label }, count: 2, cursor });
    assert.ok(page.runs.length <= 2);
    seen.push(...page.runs.map((r) => r.workflowRunId));
    cursor = page.cursor;
  } while (cursor);
  assert.deepEqual([...seen].sort(), [...ids].sort());
  const { runs } = await client.logs({ workflowRunId: ids[0] });
  assert.equal(runs.length, 1);
  const [run] = runs;
  assert.equal(run.workflowUrl, FLAKY);
  assert.equal(run.workflowState, "RUN_FAILED");
  assert.ok(run.dlqId, "a failed run names its DLQ entry");
  const names = run.steps.flatMap((group) => group.steps.map((s) => s.stepName));
  assert.deepEqual(names.slice(0, 2), ["init", "reserve"]);
  const none = await client.logs({ filter: { label, state: "RUN_SUCCESS" } });
  assert.equal(none.runs.length, 0);
});

test("dlq.list filters by label, run id and URL, and pages with a cursor", async () => {
  const label = newLabel("list");
  const entries = await failedRuns(label, 3);
  for (const m of entries) {
    assert.equal(m.workflowUrl, FLAKY);
    assert.ok(m.dlqId && m.workflowRunId && m.workflowCreatedAt);
  }
  const one = await client.dlq.list({ filter: { workflowRunId: entries[0].workflowRunId } });
  assert.deepEqual(one.messages.map((m) => m.dlqId), [entries[0].dlqId]);
  const first = await client.dlq.list({ count: 2, filter: { label, workflowUrl: FLAKY } });
  assert.equal(first.messages.length, 2);
  assert.ok(first.cursor);
  const rest = await client.dlq.list({ count: 2, cursor: first.cursor, filter: { label } });
  assert.deepEqual(rest.messages.map((m) => m.dlqId), [entries[2].dlqId]);
  assert.equal(rest.cursor, undefined);
});

test("dlq.resume by one id, by ids, and the deprecated { dlqId } form keep the run id and the finished steps", async () => {
  const label = newLabel("resume");
  const entries = await failedRuns(label, 4);
  const single = await client.dlq.resume(entries[0].dlqId);
  assert.equal(single.workflowRuns.length, 1);
  assert.equal(single.workflowRuns[0].workflowRunId, entries[0].workflowRunId);
  const pair = await client.dlq.resume([entries[1].dlqId, entries[2].dlqId]);
  assert.deepEqual(pair.workflowRuns.map((r) => r.workflowRunId), [entries[1].workflowRunId, entries[2].workflowRunId]);
  const legacy = await client.dlq.resume({ dlqId: entries[3].dlqId, retries: 2 });
  assert.equal(legacy.workflowRunId, entries[3].workflowRunId);
  await settled(label, "RUN_SUCCESS", 4);
  assert.equal((await client.dlq.list({ filter: { label } })).messages.length, 0);
  const resumed = (await runsOf(label)).find((r) => r.workflowRunId === entries[0].workflowRunId && r.workflowState === "RUN_SUCCESS");
  const steps = resumed.steps.flatMap((group) => group.steps.map((s) => s.stepName));
  assert.deepEqual(steps, ["init", "reserve", "charge"]);
});

test("dlq.restart by id with retries and flow control, and by filter with a cursor", async () => {
  const label = newLabel("restart");
  const entries = await failedRuns(label, 3);
  const one = await client.dlq.restart(entries[0].dlqId, {
    retries: 4, flowControl: { key: "compat-fc", parallelism: 2 },
  });
  assert.equal(one.workflowRuns[0].workflowRunId, entries[0].workflowRunId);
  const first = await client.dlq.restart({ filter: { label }, count: 1 });
  assert.equal(first.workflowRuns.length, 1);
  assert.ok(first.cursor, "more entries match: a cursor to go on with");
  const second = await client.dlq.restart({ filter: { label }, count: 5, cursor: first.cursor });
  assert.equal(second.workflowRuns.length, 1);
  assert.equal(second.cursor, undefined);
  await settled(label, "RUN_SUCCESS", 3);
  const restarted = (await runsOf(label)).find(
    (r) => r.workflowRunId === entries[0].workflowRunId && r.workflowState === "RUN_SUCCESS");
  assert.equal(restarted.retries, 4);
  assert.equal(restarted.flowControlKey, "compat-fc");
});

test("dlq.resume of every entry ({ all: true }) loops until no cursor is left", async () => {
  const label = newLabel("resume-all");
  await failedRuns(label, 3);
  let cursor;
  let resumed = 0;
  do {
    const page = await client.dlq.resume({ all: true, count: 2, cursor });
    resumed += page.workflowRuns.length;
    cursor = page.cursor;
  } while (cursor);
  assert.ok(resumed >= 3);
  await settled(label, "RUN_SUCCESS", 3);
  assert.equal((await client.dlq.list({ filter: { label } })).messages.length, 0);
});

test("dlq.delete by id, by ids, by filter and all", async () => {
  const label = newLabel("delete");
  const entries = await failedRuns(label, 5);
  assert.equal((await client.dlq.delete(entries[0].dlqId)).deleted, 1);
  assert.equal((await client.dlq.delete([entries[1].dlqId, entries[2].dlqId])).deleted, 2);
  assert.equal((await client.dlq.delete({ filter: { label, workflowRunId: entries[3].workflowRunId } })).deleted, 1);
  assert.deepEqual((await client.dlq.list({ filter: { label } })).messages.map((m) => m.dlqId), [entries[4].dlqId]);
  let cursor;
  do {
    cursor = (await client.dlq.delete({ all: true, count: 100, cursor })).cursor;
  } while (cursor);
  assert.equal((await client.dlq.list()).messages.length, 0);
  assert.equal((await runsOf(label)).filter((r) => r.workflowState === "RUN_FAILED").length, 5, "runs stay failed");
});

test("cancel by id, by ids, by URL prefix, by exact URL, by label, all, and the legacy forms", async () => {
  const label = newLabel("cancel");
  const ids = await start(SLOW, label, 9);
  await settled(label, "RUN_STARTED", 9);
  assert.deepEqual(await client.cancel(ids[0]), { cancelled: 1 });
  assert.deepEqual(await client.cancel([ids[1], ids[2]]), { cancelled: 2 });
  assert.deepEqual(await client.cancel({ ids: ids[3] }), { cancelled: 1 });
  assert.deepEqual(await client.cancel({ filter: { workflowUrlStartingWith: SLOW.slice(0, -2), label }, count: 1 }), { cancelled: 1 });
  assert.deepEqual(await client.cancel({ filter: { workflowUrl: SLOW.slice(0, -2) } }), { cancelled: 0 }, "an exact URL is not a prefix");
  assert.deepEqual(await client.cancel({ filter: { workflowUrl: SLOW, label }, count: 2 }), { cancelled: 2 });
  assert.deepEqual(await client.cancel({ urlStartingWith: SLOW }), { cancelled: 2 });
  assert.deepEqual(await client.cancel({ all: true }), { cancelled: 0 });
  await settled(label, "RUN_CANCELED", 9);
});

test("cancel({ all: true }) cancels every run in progress", async () => {
  const label = newLabel("cancel-all");
  await start(SLOW, label, 3);
  await settled(label, "RUN_STARTED", 3);
  assert.deepEqual(await client.cancel({ all: true }), { cancelled: 3 });
  await settled(label, "RUN_CANCELED", 3);
});

test("dlq.retryFailureFunction calls a failed failure callback again", async () => {
  const label = newLabel("callback");
  await start(CALLBACK, label, 1);
  const [entry] = await until(
    async () => (await client.dlq.list({ filter: { label } })).messages,
    (m) => m.length === 1 && m[0].failureCallbackInfo?.state === "CALLBACK_FAIL",
    "a DLQ entry whose failure callback failed",
  );
  assert.equal(entry.failureCallback, CALLBACK);
  const failedOnes = await client.dlq.list({ filter: { label, failureFunctionState: "CALLBACK_FAIL" } });
  assert.equal(failedOnes.messages.length, 1);
  const retried = await client.dlq.retryFailureFunction({ dlqId: entry.dlqId });
  assert.equal(retried.workflowRunId, entry.workflowRunId);
  const [after] = await until(
    async () => (await client.dlq.list({ filter: { label } })).messages,
    (m) => m[0]?.failureCallbackInfo?.state === "CALLBACK_SUCCESS",
    "the retried failure callback to succeed",
  );
  assert.equal(after.dlqId, entry.dlqId, "the entry stays in the DLQ");
  const [run] = await runsOf(label);
  assert.equal(run.failureFunction.state, "CALLBACK_SUCCESS");
  assert.match(run.failureFunction.failResponse, /division by zero/);
  await assert.rejects(client.dlq.retryFailureFunction({ dlqId: entry.dlqId }), /CALLBACK_SUCCESS/);
  const plainLabel = newLabel("no-callback");
  await failedRuns(plainLabel, 1);
  // the JS SDK's trigger names the workflow's URL as every run's failure callback: until the app
  // answers that it has no failure function, that call is in progress
  const [plain] = await until(
    async () => (await client.dlq.list({ filter: { label: plainLabel } })).messages,
    (m) => m.length === 1 && m[0].failureCallbackInfo === undefined,
    "the app to answer that it has no failure function",
  );
  await assert.rejects(client.dlq.retryFailureFunction({ dlqId: plain.dlqId }), /no failure callback/);
});
