"""svckit: explore and operate key-value, vector, account and workflow services from Jupyter.

Public face (everything else is private)::

    import svckit
    c = svckit.connect()          # clients from the SVC_* variables
    c.kv.set("a", "b"); c.kv.get("a")

Clients live in ``svckit.kv``, ``svckit.vector``, ``svckit.account`` and ``svckit.queue``; DataFrame
adapters in ``svckit.frames``; widgets in ``svckit.widgets``; the offline sandbox in ``svckit.sandbox``.
"""

from __future__ import annotations

from svckit._version import __version__
from svckit.config import Settings
from svckit.connect import Clients, connect
from svckit.errors import mask

__all__ = ["Clients", "Settings", "__version__", "connect", "mask"]
