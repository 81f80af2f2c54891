// @upstash/vector 1.2.3, unchanged, against the sandbox's dense index: `Index.fromEnv()` as an app
// builds it (UPSTASH_VECTOR_REST_URL / _TOKEN). The index has an embedding model (all-MiniLM-L6-v2,
// 384 dimensions, COSINE): it takes text (`data`) and raw 384-dimensional vectors alike.
//
// Only this file uses the dense index of the shared sandbox. The default-namespace tests use ids of
// their own; every namespace starts with "js-". The tests run in order; the last one resets everything.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { Index } from "@upstash/vector";

const index = Index.fromEnv();
const DIM = 384;

/** A 384-dimensional vector with ones at `hot` (cosine similarities are then easy to reason about). */
const unit = (...hot) => Array.from({ length: DIM }, (_, i) => (hot.includes(i) ? 1 : 0));
const ns = (name) => `js-${name}-${randomUUID().slice(0, 8)}`;
const ids = (results) => results.map((r) => (r === null ? null : r.id));
const close = (actual, expected, what) =>
  assert.ok(Math.abs(actual - expected) < 1e-4, `${what}: ${actual}, expected ${expected}`);

/** Every vector of a namespace, following range's cursor to the end (at most `limit` per page). */
async function rangeAll(target, options = {}, limit = 3) {
  const vectors = [];
  let cursor = "0";
  let pages = 0;
  do {
    const page = await target.range({ cursor, limit, ...options });
    vectors.push(...page.vectors);
    cursor = page.nextCursor;
    pages += 1;
    assert.ok(pages < 100, "range never ended");
  } while (cursor !== "" && cursor !== "0");
  return { vectors, pages };
}

// -- the default namespace -------------------------------------------------------------------------
test("a user upserts text with data and finds it with a text query", async () => {
  assert.equal(await index.upsert([
    { id: "txt-cat", data: "A cat sleeps on the warm sofa", metadata: { pet: true } },
    { id: "txt-car", data: "The engine of the car needs fresh oil", metadata: { pet: false } },
    { id: "txt-dog", data: "A dog fetches the ball in the park", metadata: { pet: true } },
  ]), "Success");
  const [best] = await index.query({ data: "kitten napping", topK: 1, includeData: true, includeMetadata: true });
  assert.equal(best.id, "txt-cat");
  assert.equal(best.data, "A cat sleeps on the warm sofa");
  assert.deepEqual(best.metadata, { pet: true });
  assert.ok(best.score > 0 && best.score <= 1, `score ${best.score}`);
  const pets = await index.query({ data: "vehicle motor", topK: 5, filter: "pet = true" });
  assert.deepEqual(ids(pets).sort(), ["txt-cat", "txt-dog"]);
});

test("a user upserts raw vectors and queries by vector", async () => {
  assert.equal(await index.upsert({ id: "vec-0", vector: unit(0), metadata: { n: 0 }, data: "zero" }), "Success");
  await index.upsert([{ id: "vec-1", vector: unit(1) }, { id: "vec-01", vector: unit(0, 1), metadata: { n: 1 } }]);
  const hits = await index.query({ vector: unit(0), topK: 2, includeVectors: true, includeMetadata: true,
    includeData: true, filter: "n >= 0" });
  assert.deepEqual(ids(hits), ["vec-0", "vec-01"]);
  close(hits[0].score, 1, "score of the same vector");
  close(hits[1].score, (1 + Math.SQRT1_2) / 2, "score at 45 degrees"); // COSINE: (1 + cos) / 2
  assert.deepEqual(hits[0].metadata, { n: 0 });
  assert.equal(hits[0].data, "zero");
  assert.deepEqual(hits[0].vector, unit(0));
  const [plain] = await index.query({ vector: unit(1), topK: 1 });
  assert.equal(plain.id, "vec-1");
  assert.equal(plain.metadata, undefined);
  assert.equal(plain.vector, undefined);
});

test("a user runs several queries at once with queryMany", async () => {
  const [byVector, byOther] = await index.queryMany([
    { vector: unit(0), topK: 1 },
    { vector: unit(1), topK: 1, includeVectors: true },
  ]);
  assert.deepEqual(ids(byVector), ["vec-0"]);
  assert.deepEqual(ids(byOther), ["vec-1"]);
  assert.deepEqual(byOther[0].vector, unit(1));
});

test("a user fetches vectors by ids and by id prefix", async () => {
  const got = await index.fetch(["vec-0", "missing", "txt-cat"], { includeMetadata: true, includeData: true });
  assert.deepEqual(ids(got), ["vec-0", null, "txt-cat"]);
  assert.deepEqual(got[0].metadata, { n: 0 });
  assert.equal(got[0].data, "zero");
  assert.equal(got[0].vector, undefined);
  const [withVector] = await index.fetch(["vec-1"], { includeVectors: true });
  assert.deepEqual(withVector.vector, unit(1));
  assert.deepEqual(ids(await index.fetch({ prefix: "vec-" })).sort(), ["vec-0", "vec-01", "vec-1"]);
  assert.deepEqual(ids(await index.fetch({ ids: ["txt-dog"] })), ["txt-dog"]);
});

test("a user pages through the index with range, with and without a prefix", async () => {
  const { vectors, pages } = await rangeAll(index, { includeMetadata: true }, 2);
  assert.deepEqual(ids(vectors).sort(), ["txt-car", "txt-cat", "txt-dog", "vec-0", "vec-01", "vec-1"]);
  assert.equal(pages, 3);
  assert.deepEqual(vectors.find((v) => v.id === "vec-0").metadata, { n: 0 });
  const txt = await index.range({ cursor: "0", limit: 10, prefix: "txt-", includeData: true });
  assert.deepEqual(ids(txt.vectors).sort(), ["txt-car", "txt-cat", "txt-dog"]);
  assert.equal(txt.nextCursor, "");
  assert.ok(txt.vectors.every((v) => typeof v.data === "string"));
});

test("a user updates metadata (overwrite and PATCH), data and the vector", async () => {
  await index.upsert({ id: "upd", vector: unit(5), metadata: { a: 1, nested: { x: 1, y: 2 } }, data: "old" });
  assert.deepEqual(await index.update({ id: "upd", metadata: { b: 2 } }), { updated: 1 });
  assert.deepEqual((await index.fetch(["upd"], { includeMetadata: true }))[0].metadata, { b: 2 });
  await index.update({ id: "upd", metadata: { c: 3, b: null, nested: { x: 9 } }, metadataUpdateMode: "PATCH" });
  assert.deepEqual((await index.fetch(["upd"], { includeMetadata: true }))[0].metadata, { c: 3, nested: { x: 9 } });
  assert.deepEqual(await index.update({ id: "upd", vector: unit(6) }), { updated: 1 });
  const [moved] = await index.query({ vector: unit(6), topK: 1, includeMetadata: true });
  assert.equal(moved.id, "upd");
  assert.deepEqual(moved.metadata, { c: 3, nested: { x: 9 } }); // metadata kept
  await index.update({ id: "upd", data: "a rocket launch into orbit" }); // re-embedded by the model
  const [space] = await index.query({ data: "spaceflight to the moon", topK: 1, includeData: true });
  assert.equal(space.id, "upd");
  assert.equal(space.data, "a rocket launch into orbit");
  assert.deepEqual(await index.update({ id: "missing", metadata: { x: 1 } }), { updated: 0 });
});

test("a user deletes by id, ids, prefix and filter", async () => {
  await index.upsert(Array.from({ length: 6 }, (_, i) => (
    { id: `del-${i}`, vector: unit(10 + i), metadata: { group: i % 2 ? "odd" : "even" } })));
  await index.upsert([{ id: "tmp-1", vector: unit(20) }, { id: "tmp-2", vector: unit(21) }]);
  assert.deepEqual(await index.delete("del-0"), { deleted: 1 });
  assert.deepEqual(await index.delete(["del-1", "nope"]), { deleted: 1 });
  assert.deepEqual(await index.delete({ prefix: "tmp-" }), { deleted: 2 });
  assert.deepEqual(await index.delete({ filter: "group = 'odd'" }), { deleted: 2 }); // del-3, del-5
  assert.deepEqual(ids(await index.fetch({ prefix: "del-" })).sort(), ["del-2", "del-4"]);
});

test("a user reads the index info", async () => {
  const info = await index.info();
  assert.equal(info.dimension, DIM);
  assert.equal(info.similarityFunction, "COSINE");
  assert.equal(info.denseIndex.dimension, DIM);
  assert.equal(info.denseIndex.embeddingModel, "all-MiniLM-L6-v2");
  assert.equal(info.pendingVectorCount, 0);
  assert.ok(info.indexSize > 0);
  assert.equal(info.namespaces[""].vectorCount, info.vectorCount - Object.entries(info.namespaces)
    .filter(([name]) => name !== "").reduce((sum, [, n]) => sum + n.vectorCount, 0));
  assert.ok(info.namespaces[""].vectorCount >= 9, JSON.stringify(info.namespaces[""]));
});

// -- namespaces ------------------------------------------------------------------------------------
test("namespace(ns).upsert and query keep to that namespace", async () => {
  const name = ns("upsert");
  const space = index.namespace(name);
  assert.equal(await space.upsert([{ id: "n-text", data: "Bake the bread for forty minutes" }]), "Success");
  assert.equal(await space.upsert({ id: "n-vec", vector: unit(0), metadata: { here: true } }), "Success");
  assert.deepEqual(ids(await space.query({ data: "baking a loaf", topK: 1 })), ["n-text"]);
  const [hit] = await space.query({ vector: unit(0), topK: 1, includeMetadata: true });
  assert.equal(hit.id, "n-vec");
  assert.deepEqual(hit.metadata, { here: true });
  assert.ok(!ids(await index.query({ vector: unit(0), topK: 10 })).includes("n-vec")); // not in the default one
  assert.deepEqual(ids(await index.query({ vector: unit(0), topK: 5 }, { namespace: name })), ["n-vec", "n-text"]);
});

test("namespace(ns).fetch and range read only that namespace", async () => {
  const name = ns("read");
  const space = index.namespace(name);
  await space.upsert(Array.from({ length: 5 }, (_, i) => ({ id: `r-${i}`, vector: unit(i), metadata: { i } })));
  await index.upsert({ id: "r-0", vector: unit(30), metadata: { i: "default" } }); // same id, default namespace
  const got = await space.fetch(["r-0", "r-9"], { includeMetadata: true });
  assert.deepEqual(got[0].metadata, { i: 0 });
  assert.equal(got[1], null);
  assert.deepEqual(ids(await space.fetch({ prefix: "r-" })).sort(), ["r-0", "r-1", "r-2", "r-3", "r-4"]);
  const { vectors, pages } = await rangeAll(space, { includeMetadata: true }, 2);
  assert.deepEqual(ids(vectors).sort(), ["r-0", "r-1", "r-2", "r-3", "r-4"]);
  assert.equal(pages, 3);
  assert.deepEqual((await index.fetch(["r-0"], { includeMetadata: true }))[0].metadata, { i: "default" });
  await index.delete("r-0");
});

test("namespace(ns).update and delete change only that namespace", async () => {
  const name = ns("write");
  const space = index.namespace(name);
  await space.upsert([{ id: "w-1", vector: unit(1), metadata: { v: 1 } }, { id: "w-2", vector: unit(2) },
    { id: "w-3", vector: unit(3), metadata: { drop: true } }]);
  assert.deepEqual(await space.update({ id: "w-1", metadata: { v: 2 } }), { updated: 1 });
  assert.deepEqual((await space.fetch(["w-1"], { includeMetadata: true }))[0].metadata, { v: 2 });
  assert.deepEqual(await index.update({ id: "w-1", metadata: { v: 3 } }), { updated: 0 }); // not in the default one
  assert.deepEqual(await space.delete("w-2"), { deleted: 1 });
  assert.deepEqual(await space.delete({ filter: "drop = true" }), { deleted: 1 });
  assert.deepEqual(ids((await space.range({ cursor: "0", limit: 10 })).vectors), ["w-1"]);
});

test("namespace(ns).resumableQuery pages through the nearest vectors", async () => {
  const space = index.namespace(ns("resumable"));
  await space.upsert(Array.from({ length: 5 }, (_, i) => ({ id: `q-${i}`, vector: unit(0, 1 + i).map(
    (x, d) => (d === 0 ? 5 - i : x)) })));
  const { result, fetchNext, stop } = await space.resumableQuery({ vector: unit(0), topK: 2, maxIdle: 60 });
  assert.deepEqual(ids(result), ["q-0", "q-1"]);
  assert.deepEqual(ids(await fetchNext(2)), ["q-2", "q-3"]);
  assert.deepEqual(ids(await fetchNext(2)), ["q-4"]);
  assert.equal(await stop(), "Success");
});

test("info() counts the vectors of each namespace (1.2.3's namespace() has no info of its own)", async () => {
  const name = ns("info");
  await index.namespace(name).upsert([{ id: "i-1", vector: unit(1) }, { id: "i-2", vector: unit(2) }]);
  const info = await index.info();
  assert.deepEqual(info.namespaces[name], { vectorCount: 2, pendingVectorCount: 0 });
  assert.equal(info.vectorCount, Object.values(info.namespaces).reduce((sum, n) => sum + n.vectorCount, 0));
});

test("listNamespaces() lists the default namespace and every namespace a user wrote to", async () => {
  const a = ns("list"), b = ns("list");
  await index.namespace(a).upsert({ id: "x", vector: unit(1) });
  await index.upsert({ id: "x", vector: unit(1) }, { namespace: b });
  const names = await index.listNamespaces();
  for (const name of ["", a, b]) assert.ok(names.includes(name), `${JSON.stringify(name)} in ${names}`);
});

test("after namespace(ns).reset() the namespace is kept, empty: listed, no vectors, deletable", async () => {
  const name = ns("reset");
  const space = index.namespace(name);
  await space.upsert([{ id: "a", vector: unit(1) }, { id: "b", vector: unit(2) }]);
  await index.upsert({ id: "keep-me", vector: unit(2) }, { namespace: `${name}-other` });
  assert.equal(await space.reset(), "Success");
  assert.deepEqual(await space.range({ cursor: "0", limit: 10 }), { nextCursor: "", vectors: [] });
  assert.deepEqual(await space.fetch(["a", "b"]), [null, null]);
  assert.ok((await index.listNamespaces()).includes(name), "the reset namespace is still listed");
  assert.deepEqual((await index.info()).namespaces[name], { vectorCount: 0, pendingVectorCount: 0 });
  assert.deepEqual(ids(await index.fetch(["keep-me"], { namespace: `${name}-other` })), ["keep-me"]);
  assert.equal(await index.deleteNamespace(name), "Success");
  assert.ok(!(await index.listNamespaces()).includes(name));
});

test("reset({ namespace }) empties that namespace alone", async () => {
  const name = ns("reset-opt");
  await index.upsert({ id: "gone", vector: unit(1) }, { namespace: name });
  assert.equal(await index.reset({ namespace: name }), "Success");
  assert.deepEqual(await index.fetch(["gone"], { namespace: name }), [null]);
  assert.deepEqual(ids(await index.fetch(["vec-0"])), ["vec-0"]); // the default namespace is untouched
});

test("deleteNamespace() removes a namespace; an unknown one and the default one are refused", async () => {
  const name = ns("delete");
  await index.namespace(name).upsert({ id: "x", vector: unit(1) });
  assert.equal(await index.deleteNamespace(name), "Success");
  assert.ok(!(await index.listNamespaces()).includes(name));
  assert.deepEqual(await index.namespace(name).fetch(["x"]), [null]);
  await assert.rejects(index.deleteNamespace(name), /does not exist/);
  await assert.rejects(index.deleteNamespace(""), /default namespace/);
});

test("the errors a user sees: a vector of the wrong dimension, a wrong token", async () => {
  await assert.rejects(index.upsert({ id: "short", vector: [0.1, 0.2] }), /Invalid vector dimension: 2, expected: 384/);
  const wrong = new Index({ url: process.env.UPSTASH_VECTOR_REST_URL, token: "not-the-token", retry: false });
  await assert.rejects(wrong.info(), /Unauthorized/);
});

test("reset() empties the default namespace, reset({ all: true }) every namespace", async () => {
  const name = ns("all");
  await index.namespace(name).upsert({ id: "x", vector: unit(1) });
  assert.equal(await index.reset(), "Success");
  assert.deepEqual((await index.range({ cursor: "0", limit: 10 })).vectors, []);
  assert.deepEqual(ids(await index.namespace(name).fetch(["x"])), ["x"]); // other namespaces untouched
  await index.upsert({ id: "d", vector: unit(2) });
  assert.equal(await index.reset({ all: true }), "Success");
  const info = await index.info();
  assert.equal(info.vectorCount, 0);
  for (const [space, counts] of Object.entries(info.namespaces)) assert.equal(counts.vectorCount, 0, space);
  assert.deepEqual(await index.namespace(name).fetch(["x"]), [null]);
  assert.deepEqual(await index.fetch(["d"]), [null]);
});
