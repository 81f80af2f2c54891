"""The embedded sandbox: all four interfaces of the spec, served faithfully on loopback.

Use :class:`Sandbox` in Python (a context manager running in a background thread) or
``svckit sandbox`` on the command line, which prints the SVC_* variables once it is ready.

Every public name is imported on first use (PEP 562, :mod:`svckit._lazy`): importing
``svckit.sandbox.options`` (what ``svckit``'s command-line parser needs) loads no server, uvicorn or area.
"""

from typing import TYPE_CHECKING

from svckit._lazy import lazy_exports

if TYPE_CHECKING:  # the public names, each imported on first use (svckit/_lazy.py)
    from svckit.sandbox.area import Area, Credentials, SandboxContext
    from svckit.sandbox.options import SandboxOptionError, SandboxOptions
    from svckit.sandbox.server import ALL_AREAS, Sandbox, build_app

__getattr__, __dir__ = lazy_exports(__name__, __file__)

__all__ = ["ALL_AREAS", "Area", "Credentials", "Sandbox", "SandboxContext", "SandboxOptionError", "SandboxOptions",
           "build_app"]
