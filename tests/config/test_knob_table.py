"""The full defaults table (``cedar/config/knob_table.json``): every knob the reference's
``param`` knows, typed as it types them, and ``cedar.Config`` using the same table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cedar.config import Config
from cedar.config.defaults import DEFAULTS, KNOB_TYPES
from cedar.config.knob_table import DATA_FILE, knob_table, parse, render
from cedar.config.typed import knob_type, typed_value
from cedar.errors import ConfigError
from tests.support import reference_import_problem

_DUMP = """
import json, sys, htcondor2
print(json.dumps({k: [type(v).__name__, str(v)] for k, v in htcondor2.param.items()}))
"""
#: Values that differ by nature between two processes or two versions.
_VOLATILE = {
    "PID",
    "PPID",
    "PERIODIC_CHECKPOINT",
    "CONDOR_VERSION",
    "CONDOR_BUILD_PLATFORM",
    # the Python the wheel runs on (the table was generated under 3.11; CI also runs 3.10, 3.13)
    "PYTHON3_VERSION_MINOR",
    "PYTHON3_MODULE_SUFFIX",
}


def _param_items(*, compat: bool, extra_env: dict[str, str] | None = None) -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("_condor_")}
    env.update({"CONDOR_CONFIG": "/dev/null", **(extra_env or {})})
    env.pop("PYTHONPATH", None)
    compat_run = [sys.executable, "-m", "cedar.compat", "run", "--force"]
    prefix = compat_run if compat else [sys.executable]
    script = ["-c", _DUMP] if not compat else []
    if compat:
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"cedar-param-dump-{os.getpid()}.py"
        path.write_text(_DUMP)
        script = [str(path)]
    result = subprocess.run(
        [*prefix, *script], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    return dict(json.loads(result.stdout))


def test_table_is_complete_and_typed() -> None:
    table = knob_table().knobs
    assert len(table) > 1100
    kinds = {kind for _, kind in table.values()}
    assert kinds == {"str", "int", "bool", "float"}
    assert KNOB_TYPES["STATISTICS_WINDOW_QUANTUM"] == "int"
    assert DEFAULTS["SEC_SCITOKENS_CACHE"] == "$(RUN)/cache"
    assert knob_type("TOOL.IsTool") == "bool" and knob_type("IsTool") == "bool"
    assert knob_type("SCHEDD.MAX_JOBS_RUNNING") == "int"


def test_the_data_file_is_what_the_generator_writes() -> None:
    """tools/gen_config_defaults.py writes through ``render``: reading the checked-in file and
    rendering it again gives it back byte for byte, so generator and reader agree."""
    with open(DATA_FILE, encoding="utf-8") as handle:
        text = handle.read()
    table = parse(text)
    assert render(table) == text
    assert table == knob_table()
    assert table.knobs["ABORT_ON_EXCEPTION"] == ("false", "bool")
    assert table.metaknobs["ROLE"]["Submit"] == "DAEMON_LIST=$(DAEMON_LIST) SCHEDD"
    assert set(table.derived_names) <= set(table.knobs)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        '{"version": "1", "knobs": {"A": ["x", "complex"]}, "metaknobs": {}, "derived_names": []}',
        '{"version": "1", "knobs": {"A": [1, "int"]}, "metaknobs": {}, "derived_names": []}',
        '{"version": "1", "knobs": {}, "metaknobs": []}',
    ],
)
def test_a_malformed_table_is_a_config_error(text: str) -> None:
    with pytest.raises(ConfigError, match="knob table is malformed"):
        parse(text)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("MAX_JOBS_RUNNING", "2+3", 5),
        ("MAX_JOBS_RUNNING", "1.5", 1),
        ("MAX_JOBS_RUNNING", "True", 1),
        ("MAX_JOBS_RUNNING", "1e3", 1000),
        ("MAX_JOBS_RUNNING", "abc", 0),
        ("ABORT_ON_EXCEPTION", "FALSE", False),
        ("ABORT_ON_EXCEPTION", "2>1", True),
        ("ABORT_ON_EXCEPTION", "-3", True),
        ("PRIORITY_HALFLIFE", "1+0.5", 1.5),
        ("START", "7", "7"),
    ],
)
def test_typed_values_follow_the_reference(name: str, text: str, expected: object) -> None:
    value = typed_value(name, text)
    assert value == expected and type(value) is type(expected)


def test_unparseable_falls_back_to_the_default() -> None:
    assert typed_value("PRIORITY_HALFLIFE", "abc", "86400") == 86400.0
    assert typed_value("ABORT_ON_EXCEPTION", "yes", "false") is False


def test_config_uses_the_table() -> None:
    config = Config()
    assert config.typed("STATISTICS_WINDOW_QUANTUM") == 240
    assert config.typed("IsTool") is True
    assert config.typed("CONDOR_HOST") is None
    names = config.param_names()
    assert "IsTool" in names and "TOOL.IsTool" not in names and "COLLECTOR_HOST" not in names
    assert names == sorted(names, key=str.lower)


def test_network_interface_picks_the_addresses(tmp_path: Path) -> None:
    root = tmp_path / "condor_config"
    root.write_text("NETWORK_INTERFACE = 127.0.0.1\nENABLE_IPV6 = False\n")
    config = Config.load(condor_config=str(root), environ={}, read_user_config=False)
    assert config.get("IPV4_ADDRESS") == "127.0.0.1" == config.get("IP_ADDRESS")
    assert config.get("IPV6_ADDRESS") is None
    assert "IPV6_ADDRESS" not in config.param_names()


def test_use_feature_metaknob_is_applied(tmp_path: Path) -> None:
    root = tmp_path / "condor_config"
    root.write_text("NUM_CPUS = 4\nuse FEATURE : StaticSlots\n")
    config = Config.load(condor_config=str(root), environ={}, read_user_config=False)
    assert config.get("NUM_SLOTS_TYPE_1") == "4"
    assert config.get("SLOT_TYPE_1_PARTITIONABLE") == "false"


@pytest.mark.reference
def test_compat_param_matches_the_reference_wheel() -> None:
    """Same names, order, types and values as the installed reference wheel, except the knobs
    the wheel's newer version added or changed (the table is from the 25.13.2 release)."""
    problem = reference_import_problem()
    if problem is not None:
        pytest.skip(problem)
    reference = _param_items(compat=False)
    ours = _param_items(compat=True)
    shared = [name for name in reference if name in ours]
    assert len(shared) >= 940
    assert shared == [name for name in ours if name in reference]
    assert len(set(ours) - set(reference)) == 0
    wrong_type = [n for n in shared if reference[n][0] != ours[n][0]]
    assert wrong_type == []
    differ = {n for n in shared if reference[n] != ours[n] and n not in _VOLATILE}
    # Defaults the 25.14 wheel changed since 25.13.2 (observed by diffing the two dumps).
    assert differ <= {
        "ADSTASH_SE_INDEX_NAME",
        "SINGULARITY_ADD_ROCM_FLAG",
        "SUBMIT_SEND_RESCHEDULE",
        "TRANSFER_JOB_ATTRS",
    }
