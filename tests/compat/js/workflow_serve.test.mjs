// @upstash/workflow's serve(), unchanged, in a plain node http server on loopback, run by the sandbox as
// the local QStash: steps, a sleep, parallel steps, a call to a third party, waitForEvent ended by
// notify and by its timeout, a failing step that retries into the DLQ with its failure function, its
// resume (the steps that succeeded are not run again) and restart, and cancel. The workflows verify
// every delivery with QSTASH_CURRENT_SIGNING_KEY / QSTASH_NEXT_SIGNING_KEY, as serve() does when they
// are set. Every workflow, label and event id here is this file's own.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, test } from "node:test";

import { Client, serve } from "@upstash/workflow";

import { listening, until as untilWithin } from "./helpers.mjs";

const client = new Client({ baseUrl: process.env.QSTASH_URL, token: process.env.QSTASH_TOKEN });
const tag = `js-serve-${Date.now()}`;
const ran = new Map(); // step -> how many times its function ran
const count = (name) => ran.set(name, (ran.get(name) ?? 0) + 1);
let shipFails = true;
const failures = [];
const calls = [];

const workflows = {
  steps: serve(async (context) => {
    const order = context.requestPayload;
    const paid = await context.run("charge", () => ({ paid: order.total }));
    await context.sleep("cool-down", 1);
    const [a, b] = await Promise.all([
      context.run("pack", () => "packed"),
      context.run("label", () => "labelled"),
    ]);
    const reply = await context.call("carrier", {
      url: `${base}/third`, method: "POST", body: JSON.stringify({ order: order.id }),
      headers: { "content-type": "application/json" },
    });
    return { paid, a, b, carrier: reply.body, status: reply.status };
  }),
  approval: serve(async (context) => {
    const { eventId, timeout } = context.requestPayload;
    const { eventData, timeout: timedOut } = await context.waitForEvent("approval", eventId, { timeout });
    return { eventData, timedOut };
  }),
  flaky: serve(async (context) => {
    await context.run("charge", () => { count(`charge:${context.requestPayload.id}`); return "charged"; });
    return await context.run("ship", () => {
      if (shipFails) throw new Error("carrier down");
      return "shipped";
    });
  }, {
    failureFunction: async ({ context, failStatus, failResponse }) => {
      failures.push({ runId: context.workflowRunId, failStatus, failResponse });
      return "noted";
    },
  }),
  slow: serve(async (context) => {
    await context.sleep("a-long-nap", 3600);
  }),
};

// -- the app: each workflow at /wf/<name>, a third party at /third ------------------------------------
const server = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  const path = req.url.split("?")[0];
  if (path === "/third") {
    calls.push({ method: req.method, body: body.toString() });
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ carrier: "postnl" }));
    return;
  }
  const workflow = workflows[path.replace("/wf/", "")];
  const request = new Request(`${base}${req.url}`, {
    method: req.method, headers: req.headers, body: req.method === "GET" ? undefined : body,
  });
  const response = await workflow.handler(request);
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  res.end(Buffer.from(await response.arrayBuffer()));
});
let base;
before(async () => {
  base = await listening(server);
});
after(() => server.close());

/** Poll `read` until `done(value)`, for at most 20 s. */
const until = (read, done, what) => untilWithin(read, done, what, 20_000);
const runsOf = async (label) => (await client.logs({ filter: { label }, count: 10 })).runs;
const ended = (label, n = 1) => until(() => runsOf(label),
  (runs) => runs.length >= n && runs.every((r) => r.workflowState !== "RUN_STARTED"), `runs labelled ${label} ended`);
const steps = (run) => run.steps.flatMap((group) => group.steps.map((s) => [group.type, s.stepName, s.stepType, s.state]));

test("a run of steps, a sleep, parallel steps and a call succeeds, with every step in the logs", async () => {
  const label = `${tag}-steps`;
  const { workflowRunId } = await client.trigger({ url: `${base}/wf/steps`, body: { id: 7, total: 42 }, label });
  const [run] = await ended(label);
  assert.equal(run.workflowRunId, workflowRunId);
  assert.equal(run.workflowState, "RUN_SUCCESS", JSON.stringify(run));
  assert.deepEqual(JSON.parse(run.workflowRunResponse), {
    paid: { paid: 42 }, a: "packed", b: "labelled", carrier: { carrier: "postnl" }, status: 200,
  });
  assert.deepEqual(steps(run), [
    ["sequential", "init", "Initial", "STEP_SUCCESS"],
    ["sequential", "charge", "Run", "STEP_SUCCESS"],
    ["sequential", "cool-down", "SleepFor", "STEP_SUCCESS"],
    ["parallel", "pack", "Run", "STEP_SUCCESS"],
    ["parallel", "label", "Run", "STEP_SUCCESS"],
    ["sequential", "carrier", "Call", "STEP_SUCCESS"],
  ]);
  assert.deepEqual(calls.map((c) => [c.method, JSON.parse(c.body)]), [["POST", { order: 7 }]]);
});

test("waitForEvent ends with the event notify sends, or with its timeout", async () => {
  const label = `${tag}-wait`;
  const eventId = `${tag}-approved`;
  await client.trigger({ url: `${base}/wf/approval`, body: { eventId, timeout: "1h" }, label });
  await client.trigger({ url: `${base}/wf/approval`, body: { eventId: `${tag}-never`, timeout: "1s" }, label });
  await until(() => client.getWaiters({ eventId }), (waiters) => waiters.length === 1, "the run to wait");
  const notified = await client.notify({ eventId, eventData: { approved: true } });
  assert.equal(notified.length, 1);
  assert.equal(notified[0].waiter.url, `${base}/wf/approval`);
  const runs = await ended(label, 2);
  const answers = runs.map((r) => JSON.parse(r.workflowRunResponse)).sort((x, y) => Number(x.timedOut) - Number(y.timedOut));
  assert.deepEqual(answers, [{ eventData: { approved: true }, timedOut: false }, { timedOut: true }]);
  assert.deepEqual(await client.getWaiters({ eventId }), []);
});

test("a failing step retries into the DLQ, calls the failure function, and resumes without running its steps again", async () => {
  const label = `${tag}-flaky`;
  shipFails = true;
  const { workflowRunId } = await client.trigger({ url: `${base}/wf/flaky`, body: { id: "r1" }, label, retries: 1 });
  const [entry] = await until(async () => (await client.dlq.list({ filter: { label } })).messages,
    (messages) => messages.length === 1, "the failed run in the DLQ");
  assert.equal(entry.workflowRunId, workflowRunId);
  assert.equal(entry.responseStatus, 500);
  assert.match(entry.responseBody, /carrier down/);
  const [failed] = await until(() => runsOf(label), (runs) => runs[0]?.failureFunction?.state === "CALLBACK_SUCCESS",
    "the failure function's call");
  assert.equal(failed.workflowState, "RUN_FAILED");
  assert.deepEqual(failures.map((f) => [f.runId, f.failStatus]), [[workflowRunId, 500]]);
  assert.match(failures[0].failResponse, /carrier down/);
  assert.deepEqual(steps(failed).map((s) => s.slice(1)), [
    ["init", "Initial", "STEP_SUCCESS"], ["charge", "Run", "STEP_SUCCESS"],
    ["ship", "Run", "STEP_RETRY"], ["ship", "Run", "STEP_FAILED"],
  ]);

  shipFails = false;
  const resumed = await client.dlq.resume({ dlqId: entry.dlqId });
  assert.equal(resumed.workflowRunId, workflowRunId);
  const runs = await ended(label, 2);
  const latest = runs.find((r) => r.workflowRunCreatedAt === resumed.workflowCreatedAt);
  assert.equal(latest.workflowState, "RUN_SUCCESS", JSON.stringify(latest));
  assert.equal(JSON.parse(latest.workflowRunResponse), "shipped");
  assert.equal(ran.get("charge:r1"), 1); // kept, not run again
  assert.deepEqual((await client.dlq.list({ filter: { label } })).messages, []);
});

test("a failed run restarted from the DLQ runs every step again", async () => {
  const label = `${tag}-restart`;
  shipFails = true;
  await client.trigger({ url: `${base}/wf/flaky`, body: { id: "r2" }, label, retries: 0 });
  const [entry] = await until(async () => (await client.dlq.list({ filter: { label } })).messages,
    (messages) => messages.length === 1, "the failed run in the DLQ");
  shipFails = false;
  const { workflowRuns } = await client.dlq.restart({ dlqIds: [entry.dlqId] });
  assert.equal(workflowRuns.length, 1);
  const runs = await ended(label, 2);
  assert.deepEqual(runs.map((r) => r.workflowState).sort(), ["RUN_FAILED", "RUN_SUCCESS"]);
  assert.equal(ran.get("charge:r2"), 2);
});

test("cancel ends a sleeping run as RUN_CANCELED", async () => {
  const label = `${tag}-cancel`;
  const { workflowRunId } = await client.trigger({ url: `${base}/wf/slow`, body: {}, label });
  await until(() => runsOf(label), (runs) => steps(runs[0] ?? { steps: [] }).some((s) => s[1] === "a-long-nap"),
    "the run to sleep");
  await client.cancel({ ids: workflowRunId });
  const [run] = await ended(label);
  assert.equal(run.workflowState, "RUN_CANCELED");
  assert.equal(steps(run).at(-1)[3], "STEP_CANCELED");
});
