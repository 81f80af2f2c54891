"""The local embedding index moved to :mod:`svckit.localindex` (it is not part of the vector client);
this name keeps ``from svckit.vector.local import LocalIndex`` working."""

from svckit.localindex import *  # noqa: F403
from svckit.localindex import __all__  # noqa: F401
