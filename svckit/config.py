"""Settings from the SVC_* environment variables (one set of names everywhere; see docs/architecture.md).

``svckit sandbox`` prints exactly these names as ``NAME=value`` lines, so its output can be fed to
a shell (``export $(svckit sandbox ...)``), a test, or :meth:`Settings.from_lines`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

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
}
SECRET_VARIABLES = frozenset(
    {"SVC_KV_TOKEN", "SVC_KV_READONLY_TOKEN", "SVC_VECTOR_TOKEN", "SVC_DEVAPI_KEY", "SVC_QUEUE_TOKEN"}
)


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
    ca_file: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(**{attr: env.get(name) or None for name, attr in VARIABLES.items()})

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> Settings:
        """Read ``NAME=value`` lines (as printed by ``svckit sandbox``); other lines are ignored."""
        env: dict[str, str] = {}
        for line in lines:
            name, sep, value = line.strip().partition("=")
            if sep and name in VARIABLES:
                env[name] = value
        return cls.from_env(env)

    def require(self, *attrs: str) -> tuple[str, ...]:
        """Return the values of ``attrs``, or raise ConfigError naming every missing variable."""
        names = {attr: name for name, attr in VARIABLES.items()}
        missing = [names[a] for a in attrs if not getattr(self, a)]
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
            name = next(n for n, a in VARIABLES.items() if a == f.name)
            shown = mask(value) if (name in SECRET_VARIABLES and value) else repr(value)
            parts.append(f"{f.name}={shown}")
        return f"Settings({', '.join(parts)})"
