"""A ClassAd's storage is ``classad.py``'s business: the wire codecs, JSON and the compat layer
use its public accessors (``entry_table``, ``entry_expr``, ``wire_cache``, ``from_shape``,
``from_match``), never its private slots and methods, so its layout can change in one file."""

from __future__ import annotations

import ast
from pathlib import Path

from cedar.classad_wire.classad import ClassAd

ROOT = Path(__file__).resolve().parents[2] / "cedar"


def _private_names() -> set[str]:
    """ClassAd's own private slots and methods (dunders are Python's, not private)."""
    names = set(ClassAd.__slots__) | set(vars(ClassAd))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_no_file_but_classad_py_touches_its_privates() -> None:
    private = _private_names()
    assert {"_entries", "_wire", "_shape", "_values"} <= private
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "classad.py" and path.parent.name == "classad_wire":
            continue
        text = path.read_text(encoding="utf-8")
        if "ClassAd" not in text:  # its own classes' privates (``_values`` of a request)
            continue
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in private:
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue  # a class of that file's own (its attribute may share the name)
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
    assert not found, "ClassAd privates used outside classad.py:\n" + "\n".join(found)


def test_the_accessors_are_the_storage() -> None:
    ad = ClassAd({"A": 1})
    key, entry = next(iter(ad.entry_table().items()))
    assert (key, entry[0]) == ("a", "A") and ad.entry_expr(key, entry).value() == 1
    assert ad.wire_cache is None
    ad.wire_cache = {"k": (1, b"x")}
    ad["B"] = 2  # any change drops the encodings
    assert ad.wire_cache is None
