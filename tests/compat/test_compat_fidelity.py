"""classad2/htcondor2 details the release's programs depend on, as the reference behaves
(observed with the release's bindings; expected values written down here)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from cedar.compat import classad2, htcondor2
from cedar.compat.eventlog import JobEventLog
from tests.support import reference_import_problem


def test_text_after_the_closing_bracket_is_ignored() -> None:
    ad = classad2.ClassAd('[a = 1; b = a + x; s = "str"] trailing text')
    assert ad["a"] == 1 and str(ad["b"]) == "a + x"
    assert list(classad2.ClassAd("[a = 1] [b = 2]").keys()) == ["a"]


def test_str_is_the_references_layout() -> None:
    assert (
        str(classad2.ClassAd("[zz = 1; aa = 2]"))
        == "\n    [\n        aa = 2; \n        zz = 1\n    ]"
    )
    assert str(classad2.ClassAd("[]")) == "\n    [\n    ]"
    nested = classad2.ClassAd("[a = {1, {2, 3}, [b = 1]}]")
    assert str(nested) == (
        "\n    [\n        a = \n           {\n              1,\n              \n"
        "                 {\n                    2,\n                    3\n                 },\n"
        "              \n                  [\n                      b = 1\n                  ]\n"
        "           }\n    ]"
    )
    assert repr(classad2.ClassAd("[a=1]")) == "[ a = 1 ]"


def test_pickling() -> None:
    ad = classad2.ClassAd({"x": classad2.ClassAd({"y": 2}), "l": [1, "a"]})
    ad["e"] = classad2.ExprTree("x.y + 1")
    again = pickle.loads(pickle.dumps(ad))
    assert again == ad and type(again) is classad2.ClassAd
    assert str(pickle.loads(pickle.dumps(classad2.ExprTree("a + b * c")))) == "a + b * c"
    assert pickle.loads(pickle.dumps(classad2.Value.Undefined)) is classad2.Value.Undefined


def test_print_json_with_expressions() -> None:
    ad = classad2.ClassAd({"x": 1})
    ad["e"] = classad2.ExprTree("x + 1")
    ad["u"] = classad2.Value.Undefined
    ad["s"] = 'q"uote'
    assert ad.printJson() == (
        '{\n  "e": "\\/Expr(x + 1)\\/",\n  "s": "q\\"uote",\n  "u": null,\n  "x": 1\n}'
    )


def test_refs_are_sorted() -> None:
    ad = classad2.ClassAd('[a = 1; b = a + x; s = "str"]')
    assert ad.internalRefs(classad2.ExprTree("z + b + a + s")) == ["a", "b", "s"]
    assert ad.externalRefs(classad2.ExprTree("z + b + a + y + x")) == ["x", "y", "z"]
    assert classad2.Parser is classad2.ParserType


def test_missing_names_exist() -> None:
    assert htcondor2.DaemonCommands.OffFast == 60006 and htcondor2.DaemonCommand.Reconfig == 60004
    assert htcondor2.CredTypes.OAuth == 40 and htcondor2.LogLevel.FullDebug == 1024
    for name in ("Startd", "Credd", "RemoteParam", "send_command", "log"):
        assert hasattr(htcondor2, name)
    assert hasattr(htcondor2.Schedd, "get_claims") and hasattr(htcondor2.Schedd, "jobEpochHistory")
    assert htcondor2.version().startswith("$CondorVersion: ")


LOG = """\
000 (011.000.000) 2026-11-26 12:54:21 Job submitted from host: <127.0.0.1:9638>
    [ JobBatchName = "relbatch" ]
...
040 (011.001.000) 2026-11-26 12:54:24 Started transferring input files
\tTransferring to host: <127.0.0.1:9638?sock=slot3>
...
040 (011.001.000) 2026-11-26 12:54:30 Finished transferring output files
...
004 (014.000.000) 2026-11-26 13:11:03 Job was evicted. Code 1 Subcode 0
\t(0) CPU times
\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage
\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage
\t0  -  Run Bytes Sent By Job
\t0  -  Run Bytes Received By Job
\tReason: testing hold (by user testuser)
\tPartitionable Resources :    Usage  Request Allocated
\t   Cpus                 :                 1         1
...
"""


def test_event_fields_as_the_reference_reader(tmp_path: Path) -> None:
    path = tmp_path / "user.log"
    path.write_text(LOG)
    submit, started, finished, evicted = list(JobEventLog(str(path)).events(0))
    assert submit["LogNotes"] == '[ JobBatchName = "relbatch" ]'
    assert submit["StructuredNotes"]["JobBatchName"] == "relbatch"
    assert str(submit).endswith('"relbatch" ]\n')
    assert (started["Type"], started["Host"]) == (2, "<127.0.0.1:9638?sock=slot3>")
    assert finished["Type"] == 6 and "Host" not in finished
    assert evicted["ReasonCode"] == 1 and evicted["Checkpointed"] is False
    assert evicted["TerminatedAndRequeued"] is False and "Cpus" not in evicted
    assert "Partitionable" not in str(evicted)


def test_event_log_reader_pickles(tmp_path: Path) -> None:
    path = tmp_path / "user.log"
    path.write_text(LOG)
    reader = JobEventLog(str(path)).events(0)
    next(reader)
    again = pickle.loads(pickle.dumps(reader))
    assert [event.type for event in again.events(0)] == [
        htcondor2.JobEventType.FILE_TRANSFER,
        htcondor2.JobEventType.FILE_TRANSFER,
        htcondor2.JobEventType.JOB_EVICTED,
    ]


def test_itemdata_as_the_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Submit.itemdata(qargs=None)``: an iterator of one dict an item, of the description's
    queue statement or of ``qargs`` (``queue`` before them allowed); None without an item list
    (observed with the release's htcondor2: scripts test ``is None`` and pass the iterator to
    ``Schedd.submit(itemdata=)``)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rows.txt").write_text("l1 m1\nl2 m2\n")
    listed = htcondor2.Submit("executable = /bin/true\nqueue x in (a b)")
    items = listed.itemdata()
    assert items is not None and not isinstance(items, list)
    assert list(items) == [{"x": "a"}, {"x": "b"}]
    assert htcondor2.Submit("executable = /bin/true").itemdata() is None
    assert htcondor2.Submit("executable = /bin/true\nqueue 2").itemdata() is None
    assert htcondor2.Submit("executable = /bin/true\nqueue").itemdata() is None
    expected: dict[str, list[dict[str, str]] | None] = {
        "2": None,
        "queue 2": None,
        "": None,
        "QUEUE y in (1 2)": [{"y": "1"}, {"y": "2"}],
        "y in (1,2)": [{"y": "1"}, {"y": "2"}],
        "y from rows.txt": [{"y": "l1 m1"}, {"y": "l2 m2"}],
        "y from (\n1\n2\n)": [{"y": "1"}, {"y": "2"}],
        "x in (queue a)": [{"x": "queue"}, {"x": "a"}],
        "  queue   y in (1 2)": [{"queue": "1", "y": ""}, {"queue": "2", "y": ""}],
    }
    for qargs, rows in expected.items():
        got = listed.itemdata(qargs)
        assert (None if got is None else list(got)) == rows, qargs
    with pytest.raises(ValueError):
        listed.itemdata("y in (a b")


def test_submit_is_a_mutable_mapping_whose_keys_stay() -> None:
    """As the reference's ``Submit``: ``update`` and ``setdefault`` work; ``del``, ``pop``,
    ``popitem`` and ``clear`` raise NotImplementedError and change nothing."""
    submit = htcondor2.Submit("a = 1\nb = 2")
    submit.update({"c": "3"})
    assert submit.setdefault("d", "4") == "4" and submit.setdefault("a", "9") == "1"
    assert dict(submit) == {"a": "1", "b": "2", "c": "3", "d": "4"}
    for remove in (
        lambda: submit.pop("a"),
        lambda: submit.__delitem__("b"),
        submit.clear,
        submit.popitem,
    ):
        with pytest.raises(NotImplementedError):
            remove()
    assert dict(submit) == {"a": "1", "b": "2", "c": "3", "d": "4"}


def test_reload_config_and_enable_debug_take_the_references_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``reload_config(root_config_file)`` reads the configuration again and, as the 25.13.2
    bindings do (observed), not the file named; ``enable_debug(flags)`` is accepted."""
    (tmp_path / "root.conf").write_text("CEDAR_TEST_FROM_ROOT = yes\n")
    (tmp_path / "condor_config").write_text("CEDAR_TEST_FROM_ENV = yes\n")
    monkeypatch.setenv("CONDOR_CONFIG", str(tmp_path / "condor_config"))
    htcondor2.reload_config(str(tmp_path / "root.conf"))
    try:
        assert htcondor2.param.get("CEDAR_TEST_FROM_ROOT") is None
        assert htcondor2.param.get("CEDAR_TEST_FROM_ENV") == "yes"
        htcondor2.enable_debug("D_ALL")
    finally:
        monkeypatch.undo()
        htcondor2.reload_config()


def _not_provided_of(owner: str) -> list[tuple[object, str]]:
    from cedar.compat.htcondor2 import _NOT_PROVIDED

    where: dict[str, object] = {
        "htcondor2": htcondor2,
        "Schedd": htcondor2.Schedd.__new__(htcondor2.Schedd),
        "Startd": htcondor2.Startd.__new__(htcondor2.Startd),
        "Submit": htcondor2.Submit(),
    }
    return [(where[owner], name) for name in sorted(_NOT_PROVIDED[owner])]


@pytest.mark.parametrize("owner", ["htcondor2", "Schedd", "Startd", "Submit"])
def test_what_is_not_provided_says_so(owner: str) -> None:
    """A name of the reference's API that cedar.compat lacks raises an AttributeError that
    says so (``hasattr`` stays False); any other unknown name gets Python's usual message."""
    missing = _not_provided_of(owner)
    assert missing
    for target, name in missing:
        assert not hasattr(target, name)
        with pytest.raises(AttributeError, match=f"{owner}.{name} is part of the HTCondor"):
            getattr(target, name)
    target = missing[0][0]
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        target.no_such_name  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.reference
def test_what_is_not_provided_is_the_references() -> None:
    """Every name listed as not provided is one of the reference's (so the message is true)."""
    problem = reference_import_problem()
    if problem is not None:
        pytest.skip(problem)
    from cedar.compat.htcondor2 import _NOT_PROVIDED

    script = (
        "import json, htcondor2\n"
        "names = {'htcondor2': dir(htcondor2)}\n"
        "for owner in ('Schedd', 'Startd', 'Submit'):\n"
        "    names[owner] = dir(getattr(htcondor2, owner))\n"
        "print(json.dumps(names))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CONDOR_CONFIG": "/dev/null"},
        check=True,
    )
    reference = json.loads(done.stdout)
    for owner, names in _NOT_PROVIDED.items():
        assert names <= set(reference[owner]), owner
