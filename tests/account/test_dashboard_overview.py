"""The account dashboard's first page, as a person reads it, against a real sandbox over HTTP: every
resource of the account (its key-value database, its four vector indexes, its search indexes, its
queue account) on a card with its numbers; KV commands sent count in "Commands today"; tokens shown
masked only (never whole in the widget's state or its static view); *Open* drills into the right view
on the right resource (the KV explorer lists a key the test wrote, the playground browses vectors
the test wrote), and *Back to all resources* returns; a service without the vendor's listing paths
shows the queue account alone with a note; a refresh never holds the kernel's thread.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator

import httpx
import pytest
from ipywidgets.embed import dependency_state

from svckit.account import Account
from svckit.errors import mask
from svckit.sandbox import ALL_AREAS, Sandbox
from svckit.widgets import AccountDashboard, KVExplorer, VectorPlayground
from tests.account.test_dashboard_view import rows, text
from tests.conftest import running


@pytest.fixture(scope="module")
def everything(tmp_path_factory) -> Iterator[Sandbox]:
    """A sandbox with every area and nothing seeded: each test writes what it reads, under its own names."""
    with running(tmp_path_factory.mktemp("overview"), seed=None, areas=ALL_AREAS, backend="fakeredis") as sandbox:
        yield sandbox


@pytest.fixture
def account(everything: Sandbox) -> Iterator[Account]:
    with Account.from_settings(everything.settings) as client:
        yield client


def loaded(d: AccountDashboard) -> AccountDashboard:
    assert d.wait(60), "the first page did not load"
    assert d.overview.loaded and "failed" not in d.overview.message, d.overview.message
    return d


def card(d: AccountDashboard, resource_id: str) -> str:
    """The card of ``resource_id`` on the first page, as HTML."""
    found = [c.children[0].value for section in d.overview.sections.children for c in section.children[1].children
             if f"data-id='{resource_id}'" in c.children[0].value]
    assert len(found) == 1, f"one card for {resource_id}"
    return found[0]


def page_text(d: AccountDashboard) -> str:
    return text(d.static_html())


def test_the_first_page_shows_every_resource_with_its_numbers(account):
    d = loaded(AccountDashboard(account))
    res = account.resources()
    assert res.databases and len(res.vector_indexes) == 4 and res.queue_accounts
    seen = page_text(d)
    assert "All resources of the account" in seen
    for heading in ("Key-value databases | (1)", "Vector indexes | (4)", "Queue accounts | (1)"):
        assert heading in seen
    db = res.databases[0]
    db_rows = rows(card(d, db.database_id))
    assert db_rows["region"] == ["local"] and db_rows["plan"] == ["Free"]  # plans by the names a person reads
    assert db_rows["endpoint"] == [db.rest_url.split("://", 1)[1]]
    assert db_rows["Commands today"][1].endswith(f" of {db.db_request_limit:,}")
    for index in res.vector_indexes:
        shown = rows(card(d, index.id))
        vectors = res.vector_stats[index.id].current_vector_count
        limit = f"of {index.max_vector_count:,}" if index.max_vector_count >= 0 else "(no limit)"
        assert shown["Vectors"][1] == f"{vectors:,} {limit}", shown
    queue = res.queue_accounts[0]
    assert rows(card(d, str(queue.id)))["plan"][0]  # the queue account's plan, by name
    assert d.page == "overview" and d.back_button.layout.display == "none"


def test_three_kv_commands_count_in_commands_today(tmp_path):
    with running(tmp_path / "data", seed=None, areas=["kv", "account"], backend="fakeredis") as sandbox, \
            sandbox.connect() as c:
        d = loaded(AccountDashboard(c.account))
        db = d.resources.databases[0]

        def commands_today() -> int:
            return int(rows(card(d, db.database_id))["Commands today"][1].split(" of ")[0].replace(",", ""))

        before = commands_today()
        c.kv.set("overview:a", "1")
        c.kv.incr("overview:n")
        c.kv.get("overview:a")
        d.overview.refresh_button.click()
        loaded(d)
        assert commands_today() == before + 3


def secrets_of(account: Account, sandbox: Sandbox) -> list[str]:
    res = account.resources()
    tokens = [t.get_secret_value() for db in res.databases for t in (db.rest_token, db.read_only_rest_token) if t]
    tokens += [i.token.get_secret_value() for i in res.vector_indexes if i.token]
    tokens += [q.token.get_secret_value() for q in res.queue_accounts]
    tokens += [sandbox.env["SVC_DEVAPI_KEY"]]
    assert all(len(t) > 8 for t in tokens)
    return tokens


def test_tokens_are_masked_in_the_cards_the_state_and_the_static_view(account, everything):
    d = loaded(AccountDashboard(account))
    secrets = secrets_of(account, everything)
    state = json.dumps(dependency_state(d, drop_defaults=False), default=str)
    assert len(state) <= 300_000  # loaded, the first page still weighs kilobytes (tests/widgets/test_weight.py)
    static = d.static_html()
    for secret in secrets:
        assert secret not in state and secret not in static
    db = d.resources.databases[0]
    assert rows(card(d, db.database_id))["token"] == [mask(db.rest_token.get_secret_value())]
    assert "<code class='svc-token'>***" in static


def test_open_a_database_lists_a_key_the_test_wrote_and_back_returns(account, everything):
    key = f"overview:{uuid.uuid4().hex[:8]}"
    with everything.connect() as c:
        c.kv.set(key, "drilled")
    d = loaded(AccountDashboard(account))
    db = d.resources.databases[0]
    d.overview.open_buttons[db.database_id].click()
    explorer = d.opened
    assert isinstance(explorer, KVExplorer) and d.page == "database" and d.opened_id == db.database_id
    assert explorer.kv.url == db.rest_url  # the database's own URL, from the account client
    assert key in explorer.matches
    assert d.overview.layout.display == "none" and d.resource_page.layout.display is None
    assert "Key-value database sandbox" in text(d.crumb.value) or db.database_name in text(d.crumb.value)
    d.back_button.click()
    assert d.page == "overview" and d.opened is None and explorer.comm is None  # closed with its client
    assert d.overview.layout.display is None and d.resource_page.children == ()


def test_open_a_vector_index_browses_the_vectors_the_test_wrote(account, everything):
    ns = f"overview-{uuid.uuid4().hex[:8]}"
    d = loaded(AccountDashboard(account))
    index = next(i for i in d.resources.vector_indexes if i.name == "nomodel")
    with account.vector_client(index) as vector:
        vector.upsert([{"id": f"v{n}", "vector": [1.0] * (index.dimension_count - 1) + [n / 10]}
                       for n in range(3)], namespace=ns)
    pg = d.open_resource(index.id)
    assert isinstance(pg, VectorPlayground) and d.page == "vector" and d.opened_id == index.id
    assert pg.router.remote[pg.index_kind].url == index.url  # the index's own URL, from the account client
    assert list(pg.browse(ns)["id"]) == ["v0", "v1", "v2"]
    d.back()
    assert d.page == "overview" and d.opened is None and pg.comm is None


def test_open_the_queue_account_shows_its_page_and_back_returns(account):
    d = loaded(AccountDashboard(account))
    pages = (d.overview, d.queue_view, d.resource_page)
    shown_at_once: list[int] = []  # after each change the front end applies: how many pages it shows
    for part in pages:
        part.layout.observe(lambda _c: shown_at_once.append(sum(p.layout.display != "none" for p in pages)),
                            names="display")
    queue = d.resources.queue_accounts[0]
    d.overview.open_buttons[str(queue.id)].click()  # the queue page is read in the background
    assert d.page == "queue" and d.queue_view.layout.display is None and d.overview.layout.display == "none"
    assert d.wait(30)
    seen = page_text(d)
    assert "Queue account" in seen and "plan: Free" in seen and "All resources of the account" not in seen
    d.back_button.click()
    assert d.page == "overview" and "Queue accounts | (1)" in page_text(d)
    assert shown_at_once and max(shown_at_once) == 1  # never two pages at once, even for a moment


#: the vendor's listing paths, which a service of the spec's paths alone does not serve
VENDOR_PATHS = ("/redis/databases", "/vector/index", "/search", "/qstash/users", "/qstash/stats/")


class SpecOnly(httpx.HTTPTransport):
    """The sandbox over real HTTP, as a service that serves the spec's paths only: 404 elsewhere."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.split("/devapi/v2", 1)[-1]
        if path.startswith(VENDOR_PATHS):
            return httpx.Response(404, json={"error": "not found"}, request=request)
        return super().handle_request(request)


def test_a_service_without_the_vendor_paths_shows_the_queue_account_alone_with_a_note(everything):
    with Account.from_settings(everything.settings, transport=SpecOnly()) as spec_only:
        d = loaded(AccountDashboard(spec_only))
    seen = page_text(d)
    assert "This service does not list the account's resources" in seen and "the queue account alone" in seen
    assert d.overview.message_kind == "info" and "svc-error" not in d.overview.note_box.value
    assert "Queue accounts | (1)" in seen and "Key-value databases" not in seen
    assert list(d.overview.open_buttons) == [str(d.resources.queue_accounts[0].id)]


class Held:
    """An account client whose ``resources()`` waits for the test to let it answer."""

    def __init__(self, real: Account) -> None:
        self.real = real
        self.release = threading.Event()
        self.thread: threading.Thread | None = None

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def resources(self, period: str = "1h"):
        self.thread = threading.current_thread()
        self.release.wait(10)
        return self.real.resources(period)


def test_refresh_reads_the_resources_off_the_kernels_thread(account):
    held = Held(account)
    d = AccountDashboard(held, autorefresh=False)
    d.overview.refresh_button.click()  # returns at once: the read waits in its own thread
    assert d.overview.loading and not d.overview.loaded
    held.release.set()
    loaded(d)
    assert held.thread is not None and held.thread is not threading.current_thread()


class Counted(httpx.HTTPTransport):
    """The sandbox over real HTTP, counting the requests by path."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path.split("/devapi/v2", 1)[-1])
        return super().handle_request(request)


QUEUE_ACCOUNT_PATHS = ("/qstash/users", "/queue/user")


def test_the_dashboard_reads_the_queue_account_once_at_the_start(everything):
    counted = Counted()
    with Account.from_settings(everything.settings, transport=counted) as client:
        d = loaded(AccountDashboard(client))
        at_start = [p for p in counted.paths if p.startswith(QUEUE_ACCOUNT_PATHS)]
        assert at_start == ["/qstash/users"], counted.paths  # the first page's list, not the queue page too
        assert d.queue_view.refreshed == 0 and d.queue_view.account is None
        d.open_queue()  # the queue page loads when it is first shown
        assert d.wait(30) and d.queue_view.refreshed == 1 and d.account is not None
        assert [p for p in counted.paths if p.startswith(QUEUE_ACCOUNT_PATHS)] == ["/qstash/users", "/queue/user"]
        d.back()
        d.open_queue()  # and not again when shown again
        assert d.queue_view.refreshed == 1 and d.overview.loaded == 1


class HeldQueue(Held):
    """An account client whose queue account read waits for the test to let it answer."""

    def queue_account(self):
        self.release.wait(10)
        return self.real.queue_account()


def test_the_queue_page_is_read_off_the_kernels_thread_after_a_click(account):
    held = HeldQueue(account)
    held.release.set()
    d = AccountDashboard(held, page="queue")  # asked for at the start: read at once
    assert d.queue_view.refreshed == 1
    held.release.clear()
    d.queue_view.refresh_button.click()  # returns at once: the read waits in its own thread
    assert d.queue_view.job.running and d.queue_view.refreshed == 1
    held.release.set()
    assert d.wait(30) and d.queue_view.refreshed == 2


def test_a_dashboard_closed_while_it_loads_draws_nothing_afterwards(account):
    """Closing the dashboard drops its load: the answer that comes later builds no cards (widgets
    nothing would ever close) on the closed page."""
    held = Held(account)
    d = AccountDashboard(held, autorefresh=False)
    d.overview.refresh_button.click()
    d.close()
    held.release.set()
    assert d.wait(60)
    assert d.overview.loaded == 0 and d.overview.sections.children == ()
    assert d.overview.job.thread is not None and not d.overview.job.thread.is_alive()
