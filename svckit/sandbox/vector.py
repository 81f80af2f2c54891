"""Area B of the sandbox: four local indexes served like the service's vector data API.

Every operation is ``POST /vector/{index}/{operation}[/{namespace}]`` with a JSON body (``info``
also answers GET), the paths and bodies the hosted service's SDKs send:

    query-data, query                      text / vector query (object, or array of them)
    resumable-query-data, resumable-query  start a resumable query -> {uuid, scores}
    resumable-query-next, -end             {uuid, additionalK} / {uuid}   (no namespace)
    upsert-data, upsert                    {id, data, metadata} / {id, vector, sparseVector, metadata, data}
    fetch                                  {ids | prefix, includeMetadata, includeVectors, includeData}
    range                                  {cursor, limit, prefix, include*} -> {nextCursor, vectors}
    delete                                 {ids | prefix | filter} -> {deleted}
    update                                 {id, vector, sparseVector, data, metadata, metadataUpdateMode}
    reset                                  empty the namespace; ``/reset?all`` empties every namespace
    list-namespaces, delete-namespace      names (the default namespace is ""), delete one
    info                                   index statistics with per-namespace counts

Namespaces as the service has them: the first upsert into a namespace creates it; ``reset`` (one or
``?all``) and deleting its last vector leave it, empty, still listed by ``list-namespaces`` and ``info``
(and kept across a restart); only ``delete-namespace`` removes one (404 ``Namespace ns for the index
dense does not exist`` for an unknown one, 400 for the default namespace ``""``, which always exists).
Reads, deletes, updates and resets of a namespace that does not exist answer as for an empty one.

Indexes: ``dense`` (COSINE, all-MiniLM-L6-v2), ``sparse`` (BM25), ``hybrid`` (both) and ``nomodel``
(a dense index created without an embedding model: text operations answer 422, vectors are accepted).
Every reply is ``{"result": ...}``; errors are ``{"error": ..., "status": ...}`` (400 bad request,
404 unknown namespace, resumable query or operation, 507 a write the disk refused: the index is left
as it was). Auth: ``Authorization: Bearer <SVC_VECTOR_TOKEN>``.

The model loads in a background thread at start so the other areas serve at once. Every request's work
(its JSON both ways and the index call) runs in a worker thread, never on the event loop, and each
index has its own few threads (``vector_threads_per_index``): a slow or flooded index leaves the
others, and every other area, serving. What one request may ask for is bounded by the index's
:class:`~svckit.localindex.limits.Limits` (``Sandbox(vector_max_top_k=...)`` and so on), and so is how
long its work may run (``vector_max_query_seconds``: 400 naming the limit). A request whose client goes
away stops its work too: a task watches the connection while the worker thread runs, and the index
checks between records (:class:`~svckit.localindex.limits.Budget`), so a query nobody waits for does
not run on.
State lives in ``<data_dir>/vector/<index>``. The queries and updates each index answers are counted per
UTC day, in memory, for the developer API's stats (:meth:`VectorArea.resource_stats`).
Seeding the demo corpus also runs in the background (embedding it takes a while on a small CPU); until
it is done, ``info`` counts the remaining items in ``pendingVectorCount``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import threading
import time
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svckit._files import private_dir
from svckit.localindex import DenseEmbedder, LocalIndex, get_embedder, load_demo_corpus
from svckit.localindex.dispatch import OPERATIONS, error_status
from svckit.localindex.index import SPARSE_MODEL
from svckit.localindex.limits import Cancelled, Limits
from svckit.sandbox.area import Area, DailyCounts, Health, SandboxContext
from svckit.sandbox.auth import bearer_check
from svckit.sandbox.http import ApiError, error_body_with_status, error_handlers, off_loop

log = logging.getLogger(__name__)

INDEXES: dict[str, dict[str, Any]] = {
    "dense": {"kind": "dense", "metric": "COSINE"},
    "sparse": {"kind": "sparse", "metric": "COSINE"},
    "hybrid": {"kind": "hybrid", "metric": "COSINE"},
    "nomodel": {"kind": "dense", "metric": "COSINE", "model": False},
}
SEEDED_INDEXES = ("dense", "sparse", "hybrid")
SEED_BATCH = 64
#: the operations the developer API's stats count as queries and as updates (per UTC day, per index)
QUERY_OPERATIONS = frozenset({"query", "query-data", "resumable-query", "resumable-query-data", "resumable-query-next"})
UPDATE_OPERATIONS = frozenset({"upsert", "upsert-data", "update", "delete", "reset", "delete-namespace"})


async def _watch_disconnect(receive: Any, gone: threading.Event) -> None:
    """Set ``gone`` when the client closes its connection (the request's body has been read)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()


def _import_shared_modules() -> None:
    """Import what the warm-up and the kernel's own imports share, before the warm-up's thread starts.

    The warm-up imports sentence-transformers, and through scikit-learn narwhals, while the kernel goes
    on, often to import plotly (a widget), which imports narwhals too. Two threads importing narwhals'
    circular submodules at once can end in importlib's ``_DeadlockError`` in one of them (about one
    notebook run in eight). Imported here first (40 ms), while the sandbox is starting, they are
    never imported by two threads at once. (Both scikit-learn and plotly require narwhals; without it,
    nothing is shared.)"""
    with contextlib.suppress(ImportError):
        import narwhals.stable.v1
        import narwhals.stable.v2  # noqa: F401


def _warm_up(embedder: Any) -> None:
    """Load the embedding model in the background, so the first query does not wait for it."""
    try:
        embedder.load()
    except Exception:
        if threading.main_thread().is_alive():
            log.exception("vector: the embedding model did not load; queries with text will fail")
        # else the process is exiting while the model loads (a short script, a kernel shut down):
        # the loader's thread pools are closed already, and there is nobody left to tell


class VectorArea(Area):
    prefix = "/vector"

    def __init__(self, ctx: SandboxContext) -> None:
        super().__init__(ctx)
        self.directory = ctx.data_dir / "vector"
        options = ctx.options
        self.model = options.embedding_model  # a model directory; None = packaged MiniLM
        self.demo_limit = options.demo_limit
        self.limits = Limits(**options.vector_limits())
        self.threads_per_index = options.vector_threads_per_index
        self.indexes: dict[str, LocalIndex] = {}
        self.limiters: dict[str, anyio.CapacityLimiter] = {}
        self.pending: dict[str, int] = {}
        self._check = bearer_check(lambda: ctx.credentials.vector_token, "SVC_VECTOR_TOKEN")
        self.seeding: asyncio.Task[None] | None = None
        self.embedder: DenseEmbedder | None = None
        self._warmup: threading.Thread | None = None
        self._stopping = False
        #: "query <index>" / "update <index>" -> requests answered today (the developer API's stats)
        self.daily = DailyCounts()

    def error_body(self, message: str, status: int) -> dict[str, Any]:
        return error_body_with_status(message, status)

    @property
    def max_body_bytes(self) -> int:
        return self.ctx.options.vector_max_body_bytes

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        private_dir(self.directory)

        def open_indexes() -> dict[str, LocalIndex]:
            out = {}
            for name, spec in INDEXES.items():
                model = spec.get("model", self.model)
                out[name] = LocalIndex(kind=spec["kind"], metric=spec["metric"], model=model,
                                       path=self.directory / name, limits=self.limits, name=name)
            return out

        self.indexes = await off_loop(open_indexes)
        self.limiters = {name: anyio.CapacityLimiter(self.threads_per_index) for name in self.indexes}
        self.embedder = embedder = get_embedder(self.model)
        if not embedder.loaded:
            await off_loop(_import_shared_modules)
            self._warmup = threading.Thread(target=_warm_up, args=(embedder,), name="svckit-vector-model",
                                            daemon=True)
            self._warmup.start()

    async def stop(self) -> None:
        # A worker thread cannot be cancelled: cancelling the seeding task would leave torch encoding
        # in a thread that the interpreter then tears down mid-call, and the C++ runtime aborts the
        # process at exit ("terminate called without an active exception", exit 134). So the seeding
        # stops after its current batch, and the model warm-up finishes, before the indexes close.
        self._stopping = True
        if self.seeding is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self.seeding
        if self._warmup is not None:
            await off_loop(self._warmup.join)
        for index in self.indexes.values():
            await off_loop(index.close)

    async def seed(self, name: str) -> None:
        """``demo``: load the demo corpus into the three model-backed indexes, in the background.

        Idempotent: items already stored with the same text are skipped, so a second seed adds nothing.
        """
        if name != "demo":
            return
        if self.seeding is not None and not self.seeding.done():
            return
        self.seeding = asyncio.create_task(self._seed_demo())

    async def _seed_demo(self) -> None:
        started = time.monotonic()
        corpus = await off_loop(load_demo_corpus, self.demo_limit)
        ids = [item["id"] for item in corpus]
        todo: dict[str, list[dict[str, Any]]] = {}
        for index_name in SEEDED_INDEXES:
            index = self.indexes[index_name]
            stored = await off_loop(index.fetch, ids, include_metadata=False)
            todo[index_name] = [item for item, have in zip(corpus, stored)
                                if have is None or have.get("data") != item["data"]]
            self.pending[index_name] = len(todo[index_name])
        # batch by batch across the three indexes, so each one becomes queryable early; dense and
        # hybrid share one embedder, so every text is embedded once
        for start in range(0, max(len(t) for t in todo.values()), SEED_BATCH):
            if self._stopping:
                return
            for index_name in SEEDED_INDEXES:
                batch = todo[index_name][start : start + SEED_BATCH]
                if batch:
                    await off_loop(self.indexes[index_name].upsert_data, batch)
                    self.pending[index_name] -= len(batch)
        embedded = sum(len(t) for t in todo.values())
        log.info("vector: demo corpus ready (%d items in %s; %s)", len(corpus), ", ".join(SEEDED_INDEXES),
                 f"{embedded} stored in {time.monotonic() - started:.0f} s" if embedded else "already stored")

    async def settled(self) -> None:
        """Wait until the model has loaded and a running demo seed has finished."""
        if self.seeding is not None:
            await self.seeding
        if self._warmup is not None:
            await off_loop(self._warmup.join)

    async def health(self) -> list[Health]:
        """"index": the indexes are open and the embedding model loaded (or loading: text operations
        wait for it, nothing fails meanwhile); "disk": their directory takes writes now."""
        return [self._index_health(), await Health.of_disk("disk", self.directory)]

    def _index_health(self) -> Health:
        if not self.indexes or self.embedder is None:
            return Health("index", False, "the indexes are not open (the area has not started)")
        names = f"{', '.join(self.indexes)} open"
        if self.embedder.loaded:
            model = "the embedding model loaded"
        elif self._warmup is not None and self._warmup.is_alive():
            model = "the embedding model loading (text operations wait for it)"
        else:
            return Health("index", False, f"{names}, but the embedding model did not load (the sandbox's log "
                                          "says why): text operations fail")
        pending = sum(self.pending.values())
        seeding = f", {pending:,} demo vectors still being embedded" if pending else ""
        return Health("index", True, f"{names}, {model}{seeding}")

    # -- HTTP --------------------------------------------------------------------------------
    async def holds(self) -> str:
        counts = await off_loop(lambda: [i.info()["vectorCount"] for i in self.indexes.values()])
        text = f"{sum(counts):,} vectors in {len(counts)} indexes"
        pending = sum(self.pending.values())
        return f"{text}, {pending:,} more being embedded" if pending else text

    # -- what the developer API lists (svckit/sandbox/devapi) -------------------------------------
    resource_kind = "vector"

    def resource_records(self, origin: str) -> dict[str, dict[str, Any]]:
        """Each index: its kind and model as it really runs, its URL on ``origin`` and token (no read-only
        one: ""), and the bounds enforced (top_k per query), -1 for the vendor's bounds it does not have."""
        token = self.ctx.credentials.vector_token
        unbounded = ("max_vector_count", "max_daily_queries", "max_daily_updates", "max_writes_per_second",
                     "max_query_per_second", "max_writes_per_request", "max_total_metadata_size")
        out = {}
        for name, index in self.indexes.items():
            record: dict[str, Any] = {"similarity_function": index.metric, "dimension_count": index.dimension}
            if index.kind != "sparse" and index.model_name:
                record["embedding_model"] = index.model_name
            if index.kind != "dense":
                record["sparse_embedding_model"] = SPARSE_MODEL
            out[name] = {**record, "index_type": index.kind.upper(), "endpoint": f"{origin}{self.prefix}/{name}",
                         "token": token, "read_only_token": "", "max_reads_per_request": self.limits.max_top_k,
                         **dict.fromkeys(unbounded, -1)}
        return out

    async def resource_stats(self, name: str) -> dict[str, Any]:
        """``vectors``, ``pending`` (the demo seed still embedding), ``queries_today``, ``updates_today``
        (requests answered this UTC day; a batch of queries counts each) and ``storage_bytes`` (the
        index's files on disk)."""
        index = self.indexes[name]

        def measure() -> tuple[int, int]:
            size = 0
            for path in (self.directory / name).rglob("*"):
                with contextlib.suppress(OSError):  # a file the index replaces just now
                    size += path.stat().st_size if path.is_file() else 0
            return index.info()["vectorCount"], size

        vectors, storage = await off_loop(measure)
        return {"vectors": vectors, "pending": self.pending.get(name, 0), "storage_bytes": storage,
                "queries_today": self.daily.today(f"query {name}"), "updates_today": self.daily.today(f"update {name}")}

    def env(self, base_url: str) -> dict[str, str]:
        base = f"{base_url}{self.prefix}"
        return {
            "SVC_VECTOR_URL": f"{base}/dense",
            "SVC_VECTOR_SPARSE_URL": f"{base}/sparse",
            "SVC_VECTOR_HYBRID_URL": f"{base}/hybrid",
            "SVC_VECTOR_NOMODEL_URL": f"{base}/nomodel",
            "SVC_VECTOR_TOKEN": self.ctx.credentials.vector_token,
        }

    async def _handle(self, request: Request) -> JSONResponse:
        refused = self._check(request.headers.get("authorization"))
        if refused is not None:
            raise ApiError(401, f"Unauthorized: {refused}")
        index_name = request.path_params["index"]
        if index_name not in self.indexes:
            raise ApiError(404, f"index {index_name!r} not found; this sandbox serves {', '.join(INDEXES)}")
        operation = request.path_params["operation"]
        if operation != "info":
            if operation not in OPERATIONS:
                served = ", ".join(OPERATIONS)
                raise ApiError(404, f"unknown operation {operation!r}; this sandbox serves info, {served}")
            if request.method != "POST":
                raise ApiError(405, f"{operation} takes POST")
        raw = b"" if operation == "info" else await request.body()
        namespace = request.path_params.get("namespace", "")
        gone = threading.Event()  # set if the client goes before its answer: the work stops
        answer = functools.partial(self._answer, index_name, operation, raw, namespace, request.query_params, gone)
        async with anyio.create_task_group() as watching:
            watching.start_soon(_watch_disconnect, request.receive, gone)
            try:
                reply: JSONResponse | ApiError = await off_loop(answer, limiter=self.limiters[index_name])
            except ApiError as exc:  # raised below, out of the task group (which would wrap it in a group)
                reply = exc
            finally:
                watching.cancel_scope.cancel()
        if isinstance(reply, ApiError):
            raise reply
        return reply

    def _answer(self, index_name: str, operation: str, raw: bytes, namespace: str,
                params: Any, gone: threading.Event) -> JSONResponse:
        """One request's reply, in a worker thread: decoding the body, the index call (which may wait for
        the index's lock) and encoding the reply all stay off the event loop."""
        index = self.indexes[index_name]
        if operation == "info":
            info = index.info()
            pending = self.pending.get(index_name, 0)
            info["pendingVectorCount"] = pending
            info["namespaces"].setdefault("", {"vectorCount": 0, "pendingVectorCount": 0})
            info["namespaces"][""]["pendingVectorCount"] = pending
            return JSONResponse({"result": info})
        try:
            body = json.loads(raw or b"null")
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
            raise ApiError(400, f"request body is not valid JSON: {exc}") from None
        try:
            result = OPERATIONS[operation](index, body, namespace, params, gone)
        except Cancelled:
            log.info("vector: %s on %s stopped: its client went away before the answer", operation, index_name)
            raise ApiError(400, "the client went away before the answer was ready") from None  # (read by nobody)
        except Exception as exc:
            status = error_status(exc)
            if status is None:
                raise
            raise ApiError(status, str(exc)) from None
        if operation in QUERY_OPERATIONS or operation in UPDATE_OPERATIONS:
            kind = "query" if operation in QUERY_OPERATIONS else "update"
            self.daily.add(f"{kind} {index_name}", len(body) if isinstance(body, list) and kind == "query" else 1)
        return JSONResponse({"result": result})

    def app(self) -> Starlette:
        methods = ["GET", "POST"]
        # every error, an unknown path inside /vector too, answers the spec's error body
        return Starlette(exception_handlers=error_handlers(self.error_body), routes=[
            Route("/{index}/{operation}", self._handle, methods=methods),
            Route("/{index}/{operation}/", self._handle, methods=methods),
            Route("/{index}/{operation}/{namespace:path}", self._handle, methods=methods),
        ])
