"""The vector query playground (:class:`VectorPlayground`), one view per tab:

- ``controls``: the request (text, topK, namespace, filter, index kind and its options);
- ``results``, ``compare``, ``projection``, ``batch``, ``browse``, ``explain``, ``evaluate``: the tabs;
- ``session``: what the tabs share (the request, where each kind's queries go, the hits, the maps);
- ``stale``: hits kept on screen while an edited filter is not applied yet, dimmed under a note;
- ``app``: composes them.

What is not widget code lives below: where queries go in :mod:`svckit.vector.routing`, sampling and
the 2-D map in :mod:`svckit.vector.projection`, explanations and evaluation in :mod:`svckit.vector`.
"""

from svckit.widgets.vector_playground.app import VectorPlayground

__all__ = ["VectorPlayground"]
