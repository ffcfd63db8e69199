"""cedar.compat against the reference modules, without a pool: names, enums, ClassAd behaviour,
the user-log reader (on a log recorded from a real HTCondor 25 pool), and the import machinery.

Comparisons with the reference skip when ``htcondor2``/``classad2`` are not installed.
"""

from __future__ import annotations

import enum
import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cedar.compat
from cedar.compat import classad2 as compat_classad2
from cedar.compat import htcondor2 as compat_htcondor2
from cedar.compat.eventlog import JobEventLog

USER_LOG = Path(__file__).with_name("user-events.log")


def reference(name: str):  # noqa: ANN201 - a module
    return pytest.importorskip(name, reason=f"the reference {name} wheel is not installed")


ENUMS = [
    "DaemonType",
    "AdType",
    "JobAction",
    "JobStatus",
    "JobEventType",
    "SubmitMethod",
    "TransactionFlag",
    "QueryOpt",
    "DrainType",
    "VacateType",
    "CompletionType",
    "HistorySrc",
    "SubsystemType",
    "FileTransferEventType",
]


@pytest.mark.parametrize("name", ENUMS)
def test_enums_have_the_reference_members(name: str) -> None:
    ref = getattr(reference("htcondor2"), name)
    mine = getattr(compat_htcondor2, name)
    assert {m.name: int(m.value) for m in ref} == {m.name: int(m.value) for m in mine}


def test_reference_names_we_claim_exist() -> None:
    ref = reference("htcondor2")
    assert [n for n in compat_htcondor2.__all__ if not hasattr(ref, n)] == []
    ref_classad = reference("classad2")
    assert [n for n in compat_classad2.__all__ if not hasattr(ref_classad, n)] == []


def test_plural_enum_spellings_are_the_same_enums() -> None:
    assert compat_htcondor2.DaemonTypes is compat_htcondor2.DaemonType
    assert compat_htcondor2.AdTypes.Startd is compat_htcondor2.AdType.Startd


CLASSAD_CASES = [
    '[a = 1; b = "x"; c = a + 1; l = {1, 2}; u = undefined; d = [q = 1]]',
    "[Requirements = TARGET.Memory > 1024; Rank = 2.5]",
]


@pytest.mark.parametrize("text", CLASSAD_CASES)
def test_classad_behaves_as_classad2(text: str) -> None:
    ref = reference("classad2")
    theirs = ref.ClassAd(text)
    ours = compat_classad2.ClassAd(text)
    assert sorted(ours.keys()) == sorted(theirs.keys())
    for key in theirs:
        mine, want = ours[key], theirs[key]
        assert type(mine).__name__ == type(want).__name__, key
        assert repr(mine) == repr(want), key
        assert repr(ours.lookup(key)) == repr(theirs.lookup(key))
    assert ours.printOld() == theirs.printOld()
    assert repr(ours) == repr(theirs)
    assert ours.get("missing") is None and theirs.get("missing") is None


def test_classad_helpers_match_classad2() -> None:
    ref = reference("classad2")
    for value in ['a"b', "tab\there", "back\\slash", "plain"]:
        assert compat_classad2.quote(value) == ref.quote(value)
        assert compat_classad2.unquote(ref.quote(value)) == value
    text = 'x = 1\ny = "s"\n\nx = 2\n'
    assert [dict(a) for a in compat_classad2.parseAds(text)] == [
        dict(a) for a in ref.parseAds(text)
    ]
    assert dict(compat_classad2.parseOne(text)) == dict(ref.parseOne(text))
    assert dict(compat_classad2.parseNext(io.StringIO("[a = 1]\n[a = 2]\n"))) == {"a": 1}
    assert compat_classad2.ExprTree("1 + 2").eval() == ref.ExprTree("1 + 2").eval() == 3
    assert compat_classad2.ClassAd("[u = undefined]")["u"] is compat_classad2.Value.Undefined
    with pytest.raises(compat_classad2.ClassAdException):
        compat_classad2.ClassAd("[a = ")


def test_submit_accepts_what_programs_pass() -> None:
    submit = compat_htcondor2.Submit(
        {"executable": "/bin/sh", "arguments": b"-c 'true'", "+Foo": '"bar"', "getenv": True}
    )
    assert submit["arguments"] == "-c 'true'"  # Toil passes bytes
    assert submit["getenv"] == "true"
    assert compat_htcondor2.Submit("executable = /bin/true\nqueue 3").getQArgs() == "3"


def _events(log: object) -> list[tuple[int, int, int, int, dict[str, object]]]:
    return [
        (int(e.type), e.cluster, e.proc, e.timestamp, dict(e.items()))  # type: ignore[attr-defined]
        for e in log.events(stop_after=0)  # type: ignore[attr-defined]
    ]


def test_user_log_reads_as_the_reference_does() -> None:
    ref = reference("htcondor2")
    theirs = _events(ref.JobEventLog(str(USER_LOG)))
    with JobEventLog(str(USER_LOG)) as log:
        ours = _events(log)
    assert len(ours) == len(theirs) == 12
    for mine, want in zip(ours, theirs, strict=True):
        assert mine[:4] == want[:4]
        assert mine[4].keys() == want[4].keys()
        for key, value in want[4].items():
            if key == "ExecuteProps":
                assert dict(mine[4][key]) == dict(value)  # type: ignore[call-overload]
            else:
                assert mine[4][key] == value, key
                assert type(mine[4][key]) is type(value), key


def test_user_log_follows_a_growing_file(tmp_path: Path) -> None:
    events = USER_LOG.read_text().split("...\n")
    path = tmp_path / "job.log"
    path.write_text(events[0] + "...\n" + events[1][:40])  # the second event half-written
    with JobEventLog(str(path)) as log:
        first = list(log.events(stop_after=0))
        assert [e.type for e in first] == [compat_htcondor2.JobEventType.SUBMIT]
        with path.open("a") as handle:
            handle.write(events[1][40:] + "...\n")
        second = list(log.events(stop_after=0))
    assert [(e.cluster, e.proc) for e in second] == [(1, 1)]


def test_install_registers_only_absent_modules() -> None:
    code = textwrap.dedent(
        """
        import sys, cedar.compat
        sys.modules.pop("htcondor2", None)
        import importlib.util
        real = importlib.util.find_spec("htcondor2") is not None
        names = cedar.compat.install()
        import htcondor2, classad2, htcondor, classad
        print(real, sorted(names), getattr(htcondor2, "__cedar_compat__", False),
              htcondor.Schedd.__module__, htcondor2.classad is classad2)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    real = out[0] == "True"
    if real:  # the wheel wins; only the old modules it lacks come from cedar
        assert out[1:3] == ["['classad',", "'htcondor']"] and out[3] == "False"
    else:
        assert out[3] == "True"
    assert out[4] == "cedar.compat.htcondor" and out[5] == "True"


def test_import_hook_answers_only_when_nothing_else_does(tmp_path: Path) -> None:
    pth = cedar.compat.install_hook(str(tmp_path))
    assert Path(pth).name == cedar.compat.PTH_NAME
    code = (
        "import site, sys; site.addsitedir(sys.argv[1]); import htcondor, classad; "
        "print(htcondor.__cedar_compat__, type(htcondor.JobAction.Hold).__name__, "
        "'cedar.compat.htcondor2' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "JobAction", "True"]


def test_run_a_program(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(
        "import sys, htcondor\n"
        "print(sys.argv[1:], htcondor.JobAction.Remove.value, htcondor.DaemonTypes.Schedd.name)\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "cedar.compat", "run", str(program), "a", "b"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "['a', 'b'] 3 Schedd"
    usage = subprocess.run(
        [sys.executable, "-m", "cedar.compat"], capture_output=True, text=True, check=False
    )
    assert usage.returncode == 2 and "usage:" in usage.stderr


def test_unreachable_pool_raises_the_bindings_exception() -> None:
    with pytest.raises(compat_htcondor2.HTCondorException) as info:
        compat_htcondor2.Collector("127.0.0.1:1").query(compat_htcondor2.AdType.Startd)
    assert isinstance(info.value, OSError)  # old code catches IOError/OSError too
    assert issubclass(type(info.value), enum.Enum) is False


def test_location_ads_carry_no_my_type() -> None:
    """As the reference's (observed: 25.14.1 wheel, 25.13.2 pool): with an explicit pool the
    located attributes only, so ``ad["MyType"]`` is a KeyError there too (issue 39)."""
    from cedar.daemons.pool import MockPool

    with MockPool().run_in_thread() as pool:
        collector = compat_htcondor2.Collector(pool.address)
        ads = [collector.locate(compat_htcondor2.DaemonType.Schedd)]
        ads += collector.locateAll(compat_htcondor2.DaemonType.Collector)
        for ad in ads:
            assert "MyType" not in ad
            assert "MyAddress" in ad and "Name" in ad


def test_get_claims_sends_the_constraint_as_its_text() -> None:
    """The reference sends ``str(constraint)`` (issue 39): no constraint is the attribute
    reference ``None``, which selects no slot, so ``htcondor ap claims`` says "No active
    claims" there; an empty constraint selects every claim."""
    from cedar.daemons.testing import mock_daemon

    daemon, handler = mock_daemon(allow={"READ": ["*"]})
    with daemon.run_in_thread():
        location = compat_classad2.ClassAd({"MyAddress": daemon.address, "Name": "mock"})
        schedd = compat_htcondor2.Schedd(location)
        schedd.get_claims()
        schedd.get_claims("", ["Name"])
    first, second = (seen.query["Requirements"] for seen in handler.seen)
    assert str(first) == "((None))" and second is True
    assert [seen.command for seen in handler.seen] == [5, 5]
