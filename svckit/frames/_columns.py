"""The one column-spec builder every frame of :mod:`svckit.frames` is made with.

A frame is described by its columns, in order: :class:`Column` (name, source, dtype, unit).
:func:`build` turns a list of items (models, wire dicts, rows) into the DataFrame with exactly those
columns and dtypes, empty input included, marked to display readably (:func:`svckit._units.mark`)
with the units its columns give. The shared converters (UTC times, categories, validation at the
door) live here too, so every area converts alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

import pandas as pd
from pydantic import BaseModel

from svckit._units import mark

_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True)
class Column:
    """One column of a frame: its ``name``, its ``dtype``, where a row's value comes from (``get``: a
    field name, read as an attribute or a mapping's key, default the column's name; or a function of
    the item), its ``unit`` for display (:data:`svckit._units.UNIT_NAMES`) and, for a category, the
    ``categories`` it lists first.

    ``dtype`` is a pandas dtype name (``string``, ``Int64``, ``Float64``, ``boolean``, ``bool``,
    ``int64``, ``float64``, ``str``, ``object``) or one of ``utc_ms`` / ``utc_s`` (UTC times from Unix
    milliseconds or seconds), ``utc`` (from datetimes), ``duration_ms`` (a duration from
    milliseconds) and ``category`` (of ``categories``, then any other value, sorted)."""

    name: str
    dtype: str
    get: str | Callable[[Any], Any] | None = None
    unit: str | None = None
    categories: Sequence[str] | None = None

    def value(self, item: Any) -> Any:
        get = self.name if self.get is None else self.get
        if callable(get):
            return get(item)
        return item.get(get) if isinstance(item, Mapping) else getattr(item, get)

    def array(self, values: list[Any]) -> Any:
        """``values`` as this column's dtype."""
        if self.dtype in ("utc_ms", "utc_s"):
            return utc(values, self.dtype[4:])
        if self.dtype == "utc":
            return pd.to_datetime(pd.Series(values), utc=True).dt.as_unit("us")
        if self.dtype == "duration_ms":
            return pd.to_timedelta(pd.Series(values, dtype="float64"), unit="ms")
        if self.dtype == "category":
            return category(values, self.categories)
        if self.dtype == "object":  # a Series: pandas would make an array of strings its str dtype
            return pd.Series(values, dtype="object")
        return pd.array(values, dtype=self.dtype)


def build(columns: Sequence[Column], items: Iterable[Any], **given: Sequence[Any]) -> pd.DataFrame:
    """The frame of ``items``, one row each, with ``columns`` in order and their dtypes; ``given``
    holds the values of columns the caller computed over all the rows (a run's name unique among
    them). Marked readable, with the columns' units."""
    items = list(items)
    data = {c.name: c.array(list(given[c.name]) if c.name in given else [c.value(i) for i in items])
            for c in columns}
    return mark(pd.DataFrame(data), **units(columns))


def units(columns: Sequence[Column]) -> dict[str, str]:
    """The unit of each column that has one."""
    return {c.name: c.unit for c in columns if c.unit}


# -- the shared converters -------------------------------------------------------------------------
def plain(value: Any) -> Any:
    """An enum member's value (the models keep unknown states as plain ``str``)."""
    return value.value if isinstance(value, Enum) else value


def secret_value(value: Any) -> Any:
    """Plain value of a field: enum members become their value (``PlanType.FREE`` -> ``"free"``),
    a ``SecretStr`` its text."""
    value = plain(value)
    getter = getattr(value, "get_secret_value", None)
    return getter() if callable(getter) else value


def utc(values: Iterable[Any], unit: str) -> pd.Series:
    """Unix ``unit`` ("s" or "ms") numbers -> UTC datetimes; None stays NaT."""
    numbers = pd.to_numeric(pd.Series(list(values), dtype="object"), errors="coerce")
    return pd.to_datetime(numbers, unit=unit, utc=True)


def category(values: Iterable[Any], categories: Sequence[str] | None = None) -> pd.Categorical:
    """A categorical of wire values: enum members become their value, so unknown states that the
    models keep as plain strings and known ones compare and group alike."""
    values = [getattr(v, "value", v) for v in values]
    if categories is not None:
        extra = sorted({v for v in values if v is not None and v not in categories})
        return pd.Categorical(values, categories=[*categories, *extra])
    return pd.Categorical(values)


def is_error(value: Any) -> bool:
    """A failed element of a reply (the clients return an exception value in its place)."""
    return isinstance(value, BaseException)


def models(given: Any, model: type[_M], page_field: str) -> list[_M]:
    """Validate once at the door: a page (model, wire dict, or any object with ``page_field``), one
    item (model or wire dict), or any iterable of items -> a list of ``model``; None items (ids
    that ``fetch`` did not find) are left out."""
    if isinstance(given, Mapping):
        items = given.get(page_field, [given])
    elif isinstance(given, model):
        items = [given]
    elif not isinstance(given, (list, tuple)) and hasattr(given, page_field):
        items = getattr(given, page_field)
    else:
        items = given
    return [i if isinstance(i, model) else model.model_validate(i, from_attributes=True) for i in items if i is not None]
