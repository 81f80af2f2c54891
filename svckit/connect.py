"""`svckit.connect()`: every client from one Settings, built lazily on first use."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, Self

from svckit.config import DotEnv, Settings
from svckit.errors import InvalidArgument

if TYPE_CHECKING:
    from svckit.account import Account
    from svckit.kv import KV
    from svckit.queue import Queue
    from svckit.vector import Vector


class Clients:
    """The four sync clients for one set of settings. Attributes are created when first used, so a
    notebook that only needs ``kv`` does not need the other variables."""

    def __init__(self, settings: Settings, **client_options: Any) -> None:
        self.settings = settings
        self._options = client_options

    @cached_property
    def kv(self) -> KV:
        from svckit.kv import KV

        return KV.from_settings(self.settings, **self._options)

    @cached_property
    def kv_readonly(self) -> KV:
        from svckit.kv import KV

        return KV.from_settings(self.settings, readonly=True, **self._options)

    @cached_property
    def vector(self) -> Vector:
        from svckit.vector import Vector

        return Vector.from_settings(self.settings, **self._options)

    @cached_property
    def account(self) -> Account:
        from svckit.account import Account

        return Account.from_settings(self.settings, **self._options)

    @cached_property
    def queue(self) -> Queue:
        from svckit.queue import Queue

        return Queue.from_settings(self.settings, **self._options)

    def close(self) -> None:
        for name in ("kv", "kv_readonly", "vector", "account", "queue"):
            client = self.__dict__.pop(name, None)
            if client is not None:
                client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Clients({self.settings!r})"


def connect(env: Mapping[str, str] | Settings | None = None, *, dotenv: DotEnv = False,
            **client_options: Any) -> Clients:
    """Clients from the SVC_* variables or the vendor's names for them (or a mapping of them, or a
    Settings); ``dotenv=True`` (or a path) also reads a ``.env`` file, see :meth:`Settings.from_env`."""
    if isinstance(env, Settings):
        if dotenv is not False:
            raise InvalidArgument("dotenv", "a .env file is read into Settings: pass it with env=None or a "
                                  "mapping, not with a Settings")
        return Clients(env, **client_options)
    return Clients(Settings.from_env(env, dotenv=dotenv), **client_options)
