"""Regenerate ``cedar/config/knob_table.json``: every knob the reference's ``param`` knows, with
its compiled-in default and its type, found by black-box experiment on the HTCondor release.

    python tools/gen_config_defaults.py /path/to/unpacked/htcondor-25.13.2-release

1. ``condor_config_val -dump -v`` with ``CONDOR_CONFIG=/dev/null`` lists every knob with a
   compiled-in default (raw text) and marks the machine-detected ones ``<Detected>``.
2. The release's own bindings (``lib/python3``) read the same empty configuration;
   ``htcondor2.param.items()`` gives the Python type of every knob whose value is non-empty.
3. Knobs whose default is empty are probed: every one is set through ``_condor_<NAME>`` to ``7``
   and then to ``true`` in one process each; the type ``param`` hands back is the knob's type
   (``int``/``float`` from the first run, ``bool`` from the second, else ``str``).
4. ``condor_config_val use CATEGORY`` lists each metaknob category's options and ``use
   CATEGORY:OPTION`` prints the option's template (``METAKNOB_TABLE``).
Detected knobs keep their type but no value (cedar detects them at run time).  Defaults that
draw a random number (``$RANDOM_INTEGER``) are kept raw: they are expanded on lookup.
The file is written by :func:`cedar.config.knob_table.render`, the layout's one writer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cedar.config.knob_table import DATA_FILE, KnobTable, render

OUT = Path(DATA_FILE)

PROBE = """
import json, sys, htcondor2
names = json.loads(sys.argv[1])
out = {}
for name, value in htcondor2.param.items():
    out[name] = [type(value).__name__, str(value)]
for name in names:
    try:
        value = htcondor2.param[name]
        out[name] = [type(value).__name__, str(value)]
    except KeyError:
        pass
print(json.dumps(out))
"""


def _base_env(release: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "CONDOR_CONFIG": "/dev/null",
        "PYTHONPATH": str(release / "lib" / "python3"),
    }


def dump(release: Path) -> tuple[dict[str, str], set[str], str]:
    """Raw defaults, the detected names, and the release version (from the dump)."""
    text = subprocess.run(
        [str(release / "bin" / "condor_config_val"), "-dump", "-v"],
        env=_base_env(release),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    raw: dict[str, str] = {}
    detected: set[str] = set()
    last = ""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if line.startswith(" # at: "):
            if "<Detected>" in line:
                detected.add(last)
            continue
        if line.startswith(" #"):
            continue
        name, sep, value = line.partition(" =")
        if not sep:
            continue
        last = name
        raw[name] = value[1:] if value.startswith(" ") else value
    return raw, detected, raw.get("CONDOR_VERSION", "")


METAKNOB_CATEGORIES = ("ROLE", "FEATURE", "POLICY", "SECURITY", "UPGRADE", "EXPERIMENTAL")


def _config_val(release: Path, *args: str) -> str:
    return subprocess.run(
        [str(release / "bin" / "condor_config_val"), *args],
        env=_base_env(release),
        capture_output=True,
        text=True,
        check=False,
    ).stdout


def metaknobs(release: Path) -> dict[str, dict[str, str]]:
    """Every metaknob template, by category and option (as the release spells them)."""
    table: dict[str, dict[str, str]] = {}
    for category in METAKNOB_CATEGORIES:
        listing = _config_val(release, "use", category).splitlines()[1:]
        options = [line.strip() for line in listing if line.strip()]
        table[category] = {}
        for option in options:
            text = _config_val(release, "use", f"{category}:{option}").splitlines()[1:]
            table[category][option] = "\n".join(
                line[1:] if line.startswith("\t") else line for line in text
            )
    return table


def types(release: Path, names: list[str], overrides: dict[str, str]) -> dict[str, list[str]]:
    env = _base_env(release)
    env.update({f"_condor_{name}": value for name, value in overrides.items()})
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(names)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(result.stdout))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    release = Path(argv[0])
    raw, detected, version = dump(release)
    names = sorted(raw, key=str.lower)
    plain = types(release, names, {})
    kinds: dict[str, str] = {}
    for name in names:
        if name in plain:
            kinds[name] = plain[name][0]
    unknown = [name for name in names if name not in kinds and "." not in name]
    as_number = types(release, unknown, dict.fromkeys(unknown, "7"))
    as_bool = types(release, unknown, dict.fromkeys(unknown, "true"))
    for name in unknown:
        number_kind = as_number.get(name, ["str"])[0]
        if number_kind in ("int", "float"):
            kinds[name] = number_kind
        elif as_bool.get(name, ["str"])[0] == "bool":
            kinds[name] = "bool"
    # Names param shows beyond the dump, except those a ``TOOL.`` prefixed default provides.
    extra = sorted((set(plain) - set(raw)) - {n.partition(".")[2] for n in raw}, key=str.lower)
    knobs: dict[str, tuple[str | None, str]] = {}
    for name in names:
        knobs[name] = (None if name in detected else raw[name], kinds.get(name, "str"))
    for name in extra:
        knobs[name] = (plain[name][1], plain[name][0])
    OUT.write_text(render(KnobTable(version, knobs, metaknobs(release), tuple(extra))))
    counted = sum(1 for name in names if kinds.get(name, "str") != "str")
    print(f"wrote {OUT}: {len(names)} knobs ({counted} typed), {len(detected)} detected")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
