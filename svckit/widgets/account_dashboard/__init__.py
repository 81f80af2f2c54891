"""The account dashboard (:class:`AccountDashboard`), the console's first page, one view per page:

- ``overview``: every resource of the account (databases, vector indexes, search indexes, the queue
  account) with its usage as bars against its limits, and a drill-down into each;
- ``queue_view``: the queue account's usage, limits grouped, plan comparison, rotate-token and plan
  changes;
- ``app``: composes them, and opens the KV explorer or the vector playground on a database or index.

Its cards are drawn by :mod:`svckit.widgets._account_cards` (pure functions of frames).
"""

from svckit.widgets.account_dashboard.app import AccountDashboard
from svckit.widgets.account_dashboard.queue_view import QueueAccountView, QueueResources

__all__ = ["AccountDashboard", "QueueAccountView", "QueueResources"]
