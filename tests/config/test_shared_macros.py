"""The configuration and the submit language share one line reader and macro expander."""

from __future__ import annotations

import pytest

from cedar.config import Config
from cedar.config.macros import MAX_VALUE, MacroExpander
from cedar.errors import ConfigError
from cedar.submit_language import Submit, SubmitSettings


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("$SUBSTR(V, 2)", "cdef"),
        ("$SUBSTR(V, -2)", "ef"),
        ("$SUBSTR(V, -100)", "abcdef"),
        ("$SUBSTR(V, -100, 2)", "ab"),
        ("$SUBSTR(V, 1, -2)", "bcd"),
    ],
)
def test_substr_is_the_same_in_config_and_submit(call: str, expected: str) -> None:
    config = Config.from_text(f"V = abcdef\nX = {call}\n", detect=False)
    assert config.get("X") == expected
    submit = Submit(f'V = abcdef\nexecutable = /bin/true\nMY.X = "{call}"\nqueue\n')
    ads = submit.build(settings=SubmitSettings())
    assert ads.cluster_ad["X"] == f'"{expected}"'


def test_both_languages_have_the_size_guard() -> None:
    definitions = {"A0": "x" * 1024}
    for n in range(1, 12):
        definitions[f"A{n}"] = f"$(A{n - 1})$(A{n - 1})"
    expander = MacroExpander(definitions.get)
    with pytest.raises(ConfigError, match="unreasonably long"):
        expander.expand("$(A11)")
    text = "\n".join(f"{k} = {v}" for k, v in definitions.items()) + "\nX = $(A11)\n"
    with pytest.raises(ConfigError, match="unreasonably long"):
        Config.from_text(text, detect=False).get("X")
    assert len("x" * 1024) * 2**11 > MAX_VALUE


@pytest.mark.parametrize(
    ("value", "call", "expected"),
    [
        # All observed with condor_config_val and condor_submit -dry-run (25.13.2).
        ('"/x/y/b.c"', "$F(V)", "/x/y/b.c"),
        ("/x/y/b.c", "$F(V)", "/x/y/b.c"),
        ("'/q/r.s'", "$F(V)", "/q/r.s"),
        ('"/x/y/b.c"', "$Fp(V)", "/x/y/"),
        ('"/x/y/b.c"', "$Fx(V)", ".c"),
        ('"/x/y/b.c"', "$Fnx(V)", "b.c"),
        ('"/x/y', "$F(V)", "/x/y"),
        ('/x/y"', "$F(V)", '/x/y"'),
        ("\"/x/y'", "$F(V)", "/x/y'"),
        ("/x/y/", "$Fb(V)", "/x/y/"),
        ("/x/y/", "$Fpb(V)", "/x/y"),
        ('"/x/y/z"', "$Fdb(V)", "y"),
        ("4.0", "worker-$F(V).out", "worker-4.0.out"),
    ],
)
def test_path_pieces_drop_the_quotes_in_config_and_submit(
    value: str, call: str, expected: str
) -> None:
    """``$F(MY.JobId)`` of ``"4.0"`` is ``4.0``: dask-jobqueue names its workers' files so."""
    config = Config.from_text(f"V = {value}\nX = {call}\n", detect=False)
    assert config.get("X") == expected
    if '"' not in expected:  # a quote left in the value is an error in arguments
        submit = Submit(f"V = {value}\nexecutable = /bin/true\narguments = <{call}>\nqueue\n")
        ads = submit.build(settings=SubmitSettings())
        assert ads.job_ad(0)["Args"] == f'"<{expected}>"'


def test_dask_jobqueue_names_its_worker_files_by_the_job_id() -> None:
    """The lines dask-jobqueue 0.9 writes: condor_submit makes ``worker-7.0.out`` of them."""
    text = (
        'MY.JobId = "$(ClusterId).$(ProcId)"\n'
        'MY.DaskWorkerName = "htcondor--$F(MY.JobId)--"\n'
        "executable = /bin/true\n"
        "Output = worker-$F(MY.JobId).out\n"
        "queue\n"
    )
    ads = Submit(text).build(7, settings=SubmitSettings(), submit_dir="/d")
    assert ads.job_ad(0)["Out"] == '"worker-7.0.out"'
    assert ads.job_ad(0)["DaskWorkerName"] == '"htcondor--7.0--"'


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        # Observed with condor_config_val and condor_submit -dry-run (25.13.2), A = 5.
        ("$$(X)", "$$(X)"),
        ("$$(X)$(A)", "$$(X)5"),
        ("$$(X$(A))", "$$(X5)"),
        ("$$([$(A)])", "$$([5])"),
        ("$$(X:$(A))", "$$(X:5)"),
        ("$$(((A)))", "$$(((A)))"),
    ],
)
def test_match_time_references_keep_their_text_but_not_the_macros_inside(
    call: str, expected: str
) -> None:
    config = Config.from_text(f"A = 5\nV = {call}\n", detect=False)
    assert config.get("V") == expected
    submit = Submit(f'A = 5\nexecutable = /bin/true\narguments = "{call}"\nqueue\n')
    ads = submit.build(settings=SubmitSettings())
    assert ads.job_ad(0)["Arguments"] == f'"{expected}"'
