"""The KV explorer (:class:`KVExplorer`), one view per part:

- ``browser``: the pattern, bounded SCAN steps, the key list and its pages;
- ``value_view``: the selected key's value, paged and formatted, and its edits;
- ``key_tree``: prefixes by a delimiter; ``console``: commands, pipelines, transactions;
- ``streams``: the monitor and pub/sub; ``bulk_panel``: dry runs and bulk actions;
- ``app``: composes them.
"""

from svckit.widgets.kv_explorer.app import KVExplorer

__all__ = ["KVExplorer"]
