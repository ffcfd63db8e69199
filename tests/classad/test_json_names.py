"""Any attribute name the wire carries maps to JSON (issue 37: a crash any peer could cause).

An ASCII name and a non-ASCII one of the same UTF-8 length once made the member order compare
``str`` with ``bytes`` (TypeError), so one ad advertised to a collector broke every consumer
that maps its ads to JSON.
"""

from __future__ import annotations

import json

import pytest

from cedar.classad_wire import ClassAd
from cedar.classad_wire.expr import storage_key


@pytest.mark.parametrize(
    "names",
    [
        ("Ab", "é"),  # 2 bytes each
        ("é", "Ab", "ZZ"),
        ("abc", "Aé", "ÿz"[:1] + "b"),
        ("Name", "ñame"[:3], "日", "abc"),  # 3-byte names: one CJK character and ASCII
    ],
)
def test_mixed_names_map_in_storage_order(names: tuple[str, ...]) -> None:
    ad = ClassAd({name: index for index, name in enumerate(names)})
    mapped = json.loads(ad.to_json())
    assert mapped == {name: index for index, name in enumerate(names)}
    # the members come in the reference's storage order: length, then case-folded bytes
    assert list(mapped) == sorted(names, key=storage_key)
