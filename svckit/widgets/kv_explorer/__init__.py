"""The KV explorer (:class:`KVExplorer`), one view per part:

- ``browser``: the search, bounded SCAN steps, the key list and its pages (``listing``: their words);
- ``value_view``: the selected key's value, paged and formatted, and its edits;
- ``key_tree``: namespaces by a delimiter, with counts and memory; ``console``: commands, pipelines,
  transactions;
- ``streams``: the monitor and pub/sub; ``bulk_panel``: dry runs and bulk actions;
- ``app``: composes them.
"""

from svckit.widgets.kv_explorer.app import KVExplorer

__all__ = ["KVExplorer"]
