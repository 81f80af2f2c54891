"""The embedded sandbox: all four interfaces of the spec, served faithfully on loopback.

Use :class:`Sandbox` in Python (a context manager running in a background thread) or
``svckit sandbox`` on the command line, which prints the SVC_* variables once it is ready.
"""

from svckit.sandbox.area import Area, Credentials, SandboxContext
from svckit.sandbox.server import ALL_AREAS, Sandbox, build_app

__all__ = ["ALL_AREAS", "Area", "Credentials", "Sandbox", "SandboxContext", "build_app"]
