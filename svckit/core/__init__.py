"""What the service side and the clients share, with no I/O: pure functions and plain data over
strings, numbers and dicts, imported by the local index (and so the sandbox) and by the clients
and widgets alike, so both compute the same thing with one piece of code.

Modules: ``filter`` (the metadata filter language: parser, limits, compiled evaluation), ``glob``
(its GLOB, matched by RE2 in linear time), ``bm25`` (the sparse tokenizer and BM25's weights),
``fusion`` (RRF and DBSF), ``explain`` (the arithmetic of an explained hit, and its result types)
and ``corpus`` (the demo corpus, from the standard library's docstrings).

Nothing here imports a client, the transport, the sandbox or the local index (tests/test_layers.py);
importing this package imports none of its modules.
"""
