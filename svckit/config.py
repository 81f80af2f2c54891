"""Settings from the SVC_* environment variables (one set of names everywhere; see docs/architecture.md).

``svckit sandbox`` prints exactly these names as ``NAME=value`` lines, so its output can be fed to
a shell (``export $(svckit sandbox ...)``), a test, or :meth:`Settings.from_lines`. The vendor's own
names (:data:`VENDOR_VARIABLES`, what its SDKs read) are read too, where no SVC_* name is set, and so
is a ``.env`` file when asked (``dotenv=``). The few other variables svckit reads (:data:`LOCAL_VARIABLES`)
are read here too: no other module reads ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeAlias

from svckit.errors import ConfigError, mask

#: variable name -> Settings attribute, in the order `svckit sandbox` prints them (the CA first, so
#: a reader that stops at the last area's line has it).
VARIABLES: dict[str, str] = {
    "SVC_CA_FILE": "ca_file",
    "SVC_KV_URL": "kv_url",
    "SVC_KV_TOKEN": "kv_token",
    "SVC_KV_READONLY_TOKEN": "kv_readonly_token",
    "SVC_VECTOR_URL": "vector_url",
    "SVC_VECTOR_SPARSE_URL": "vector_sparse_url",
    "SVC_VECTOR_HYBRID_URL": "vector_hybrid_url",
    "SVC_VECTOR_NOMODEL_URL": "vector_nomodel_url",
    "SVC_VECTOR_TOKEN": "vector_token",
    "SVC_DEVAPI_URL": "devapi_url",
    "SVC_DEVAPI_EMAIL": "devapi_email",
    "SVC_DEVAPI_KEY": "devapi_key",
    "SVC_QUEUE_URL": "queue_url",
    "SVC_QUEUE_TOKEN": "queue_token",
    "SVC_QUEUE_CURRENT_SIGNING_KEY": "queue_current_signing_key",
    "SVC_QUEUE_NEXT_SIGNING_KEY": "queue_next_signing_key",
}
#: the other variables svckit reads, name -> Settings attribute: what ``svckit sandbox`` and ``svckit demo``
#: need of this machine, not a service's address (never printed by ``svckit sandbox``)
LOCAL_VARIABLES: dict[str, str] = {
    "SVC_REDIS_URL": "redis_url",  # the external Redis the sandbox uses, when no --redis-url(-file)
    "SVC_EMBEDDING_CACHE": "embedding_cache",  # where embeddings are kept across processes (svckit/embedding.py)
    # where the local embedding model runs (cpu, cuda, mps); unset: where sentence-transformers chooses
    "SVC_EMBEDDING_DEVICE": "embedding_device",
    "XDG_DATA_HOME": "xdg_data_home",  # where the sandbox and the demo keep their state (svckit/cli.py)
    "DISPLAY": "display",  # whether svckit demo may open a graphical browser
    "WAYLAND_DISPLAY": "wayland_display",
}
SECRET_VARIABLES = frozenset(
    {"SVC_KV_TOKEN", "SVC_KV_READONLY_TOKEN", "SVC_VECTOR_TOKEN", "SVC_DEVAPI_KEY", "SVC_QUEUE_TOKEN",
     "SVC_QUEUE_CURRENT_SIGNING_KEY", "SVC_QUEUE_NEXT_SIGNING_KEY", "SVC_REDIS_URL"}
)

#: the vendor's own variable names (what its SDKs' ``fromEnv()`` / ``from_env()`` read, and where users
#: keep their credentials), SVC name -> vendor names, the first the one `svckit sandbox --env vendor`
#: prints. KV_REST_API_* are the names a Vercel-made database gets. The developer API's URL and the
#: sandbox's other vector indexes have no vendor name (the vendor's tools use one fixed address).
VENDOR_VARIABLES: dict[str, tuple[str, ...]] = {
    "SVC_KV_URL": ("UPSTASH_REDIS_REST_URL", "KV_REST_API_URL"),
    "SVC_KV_TOKEN": ("UPSTASH_REDIS_REST_TOKEN", "KV_REST_API_TOKEN"),
    "SVC_KV_READONLY_TOKEN": ("KV_REST_API_READ_ONLY_TOKEN",),
    "SVC_VECTOR_URL": ("UPSTASH_VECTOR_REST_URL",),
    "SVC_VECTOR_TOKEN": ("UPSTASH_VECTOR_REST_TOKEN",),
    "SVC_DEVAPI_EMAIL": ("UPSTASH_EMAIL",),
    "SVC_DEVAPI_KEY": ("UPSTASH_API_KEY",),
    "SVC_QUEUE_URL": ("QSTASH_URL",),
    "SVC_QUEUE_TOKEN": ("QSTASH_TOKEN",),
    "SVC_QUEUE_CURRENT_SIGNING_KEY": ("QSTASH_CURRENT_SIGNING_KEY",),
    "SVC_QUEUE_NEXT_SIGNING_KEY": ("QSTASH_NEXT_SIGNING_KEY",),
}


def vendor_env(env: Mapping[str, str]) -> dict[str, str]:
    """SVC_* settings (``Sandbox.env``) under the vendor's first name for each, for code written for the
    vendor's SDKs (``Redis.fromEnv()``, ``Index.fromEnv()``, ``new Client({token: process.env.QSTASH_TOKEN})``);
    a setting with no vendor name keeps its SVC name."""
    return {VENDOR_VARIABLES.get(name, (name,))[0]: value for name, value in env.items()}


#: every name a Settings is read from: the SVC_* names and the vendor's
ALL_VARIABLES: frozenset[str] = frozenset(VARIABLES).union(*VENDOR_VARIABLES.values())

#: the ``dotenv=`` argument of :meth:`Settings.from_env` (and so of every ``from_env`` and
#: :func:`svckit.connect`): False = no file, True = the ``.env`` python-dotenv finds from the working
#: directory up, a path = that file
DotEnv: TypeAlias = bool | str | os.PathLike[str]


def lookup(env: Mapping[str, str], name: str) -> str | None:
    """The value of SVC_* ``name`` in ``env``: the SVC_* name itself if set (non-empty), else the first
    of its vendor names that is set, else None."""
    for candidate in (name, *VENDOR_VARIABLES.get(name, ())):
        value = env.get(candidate)
        if value:
            return value
    return None


def dotenv_file(dotenv: DotEnv) -> dict[str, str]:
    """The variables of the ``.env`` file ``dotenv`` names (see :data:`DotEnv`), read with python-dotenv's
    ``dotenv_values``: os.environ is never changed. ``True`` and no ``.env`` found -> ``{}``; a named
    file that does not exist -> ConfigError."""
    if dotenv is False or dotenv is None:
        return {}
    from dotenv import dotenv_values, find_dotenv

    if dotenv is True:
        found = find_dotenv(usecwd=True)
        if not found:
            return {}
        path = Path(found)
    else:
        path = Path(dotenv)
        if not path.is_file():
            raise ConfigError(f"dotenv: no such file: {str(path)!r} (pass dotenv=True to look for a .env "
                              "from the working directory up, or a path to an existing file)")
    return {name: value for name, value in dotenv_values(path).items() if value is not None}


@dataclass(frozen=True)
class Settings:
    kv_url: str | None = None
    kv_token: str | None = None
    kv_readonly_token: str | None = None
    vector_url: str | None = None
    vector_sparse_url: str | None = None
    vector_hybrid_url: str | None = None
    vector_nomodel_url: str | None = None
    vector_token: str | None = None
    devapi_url: str | None = None
    devapi_email: str | None = None
    devapi_key: str | None = None
    queue_url: str | None = None
    queue_token: str | None = None
    queue_current_signing_key: str | None = None
    queue_next_signing_key: str | None = None
    ca_file: str | None = None
    redis_url: str | None = None
    embedding_cache: str | None = None
    embedding_device: str | None = None
    xdg_data_home: str | None = None
    display: str | None = None
    wayland_display: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, dotenv: DotEnv = False) -> Settings:
        """Settings from ``environ`` (default os.environ) under the SVC_* names or the vendor's
        (:data:`VENDOR_VARIABLES`): an SVC_* name wins over the vendor names, and among those the
        first listed wins. ``dotenv`` (:data:`DotEnv`) adds a ``.env`` file under ``environ``, as
        ``load_dotenv()`` would without changing os.environ: a variable set in ``environ`` wins over
        the same variable in the file; the merged names then follow the SVC_*-first rule."""
        env: Mapping[str, str] = os.environ if environ is None else environ
        if dotenv is not False:
            env = {**dotenv_file(dotenv), **env}
        return cls(**{attr: lookup(env, name) for name, attr in {**VARIABLES, **LOCAL_VARIABLES}.items()})

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> Settings:
        """Read ``NAME=value`` lines (as printed by ``svckit sandbox``, with ``--env svc`` or ``--env
        vendor``); other lines are ignored."""
        env: dict[str, str] = {}
        for line in lines:
            name, sep, value = line.strip().partition("=")
            if sep and name in ALL_VARIABLES:
                env[name] = value
        return cls.from_env(env)

    @property
    def names_a_service(self) -> bool:
        """Whether any service variable (SVC_* or the vendor's, :data:`VARIABLES`) is set."""
        return any(getattr(self, attr) for attr in VARIABLES.values())

    def require(self, *attrs: str) -> tuple[str, ...]:
        """Return the values of ``attrs``, or raise ConfigError naming every missing variable (and the
        vendor's names for it: ``missing SVC_KV_URL (or UPSTASH_REDIS_REST_URL or KV_REST_API_URL)``)."""
        names = {attr: name for name, attr in VARIABLES.items()}

        def described(name: str) -> str:
            vendor = VENDOR_VARIABLES.get(name)
            return f"{name} (or {' or '.join(vendor)})" if vendor else name

        missing = [described(names[a]) for a in attrs if not getattr(self, a)]
        if missing:
            raise ConfigError(
                f"missing {', '.join(missing)}: set the variable(s), pass the value as a keyword argument, "
                "or start a local sandbox with `svckit sandbox` (or svckit.sandbox.Sandbox())"
            )
        return tuple(getattr(self, a) for a in attrs)

    def client_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """A client's keyword ``options`` with SVC_CA_FILE as ``verify=`` (the CA bundle its https
        requests trust), unless they name a ``verify`` of their own: the one rule every client's
        ``from_settings`` (so ``from_env`` and :func:`svckit.connect` too) follows."""
        if self.ca_file is None or "verify" in options:
            return dict(options)
        return {**options, "verify": self.ca_file}

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            name = next(n for n, a in {**VARIABLES, **LOCAL_VARIABLES}.items() if a == f.name)
            shown = mask(value) if (name in SECRET_VARIABLES and value) else repr(value)
            parts.append(f"{f.name}={shown}")
        return f"Settings({', '.join(parts)})"
