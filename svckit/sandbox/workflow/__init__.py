"""Workflow runs served by the vendor's ``serve()`` SDKs, over the local QStash (:mod:`svckit.sandbox.delivery`):
the protocol's wire shapes (:mod:`.wire`), the runs and their history (:mod:`.runs`), their log
(:mod:`.steps`), waits and notifications (:mod:`.events`) and the routes (:mod:`.routes`)."""
