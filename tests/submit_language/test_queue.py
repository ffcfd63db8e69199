"""Every form of the queue statement and the submit macro language (spec 06 §4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cedar.submit_language import Submit, SubmitError, SubmitSettings, parse_queue


def args_of(text: str, directory: Path, **kw: object) -> list[str]:
    """The Args value of every job."""
    ads = Submit("executable = /bin/echo\n" + text).build(
        7,
        settings=SubmitSettings(filesystem_domain="d"),
        submit_dir=str(directory),
        now=1000,
        **kw,  # type: ignore[arg-type]
    )
    return [
        ads.job_ad(i).get("Args", ads.job_ad(i).get("Arguments", "")) for i in range(ads.num_procs)
    ]


@pytest.mark.parametrize(
    ("queue", "expected"),
    [
        ("queue", ['"0-0-0-"']),
        ("queue 2", ['"0-0-0-"', '"1-1-0-"']),
        ("N = 3\nqueue $(N)", ['"0-0-0-"', '"1-1-0-"', '"2-2-0-"']),
        ("queue 2 in (x, y)", ['"0-0-0-x"', '"1-1-0-x"', '"2-0-1-y"', '"3-1-1-y"']),
        ("queue in (a, , b)", ['"0-0-0-a"', '"1-0-1-b"']),
        ("queue in a b c", ['"0-0-0-a"', '"1-0-1-b"', '"2-0-2-c"']),
        ("queue in (\n  a b\n# skipped\n  c\n)", ['"0-0-0-a"', '"1-0-1-b"', '"2-0-2-c"']),
        ("queue item in [1:] (a, b, c)", ['"0-0-1-b"', '"1-0-2-c"']),
        ("queue v in [::2] (a, b, c)", ['"0-0-0-"', '"1-0-2-"']),
        ("queue 2*2 v in (q)", ['"0-0-0-"', '"1-1-0-"', '"2-2-0-"', '"3-3-0-"']),
    ],
)
def test_counts_items_and_steps(queue: str, expected: list[str], tmp_path: Path) -> None:
    text = f"arguments = $(Process)-$(Step)-$(ItemIndex)-$(Item)\n{queue}\n"
    assert args_of(text, tmp_path) == expected


def test_from_rows_with_several_variables(tmp_path: Path) -> None:
    got = args_of("arguments = $(a) $(b) $(Step)\nqueue 2 a,b from (\n1 2\n3 4\n)\n", tmp_path)
    assert got == ['"1 2 0"', '"1 2 1"', '"3 4 0"', '"3 4 1"']


def test_from_last_variable_takes_the_rest_and_missing_fields_are_empty(tmp_path: Path) -> None:
    got = args_of(
        "arguments = $(a)|$(b)|$(c)\nqueue a,b,c from (\none two three four\n6\n)\n", tmp_path
    )
    assert got == ['"one|two|three four"', '"6||"']


def test_from_single_line_is_one_row(tmp_path: Path) -> None:
    got = args_of("arguments = $(a)|$(b)\nqueue a,b from (x 1, y 2)\n", tmp_path)
    assert got == ['"x|1, y 2"']


def test_from_blank_row_repeats_previous_values(tmp_path: Path) -> None:
    got = args_of("arguments = $(x) $(Row)\nqueue x from (\na\n\nb\n# c\n)\n", tmp_path)
    assert got == ['"a 0"', '"a 1"', '"b 2"']


def test_from_unit_separator(tmp_path: Path) -> None:
    got = args_of("arguments = $(a)|$(b)\nqueue a,b from (\nx y\x1fz\n)\n", tmp_path)
    assert got == ['"x y|z"']


def test_from_file_has_no_comment_skipping(tmp_path: Path) -> None:
    (tmp_path / "rows.txt").write_text("alpha 1\n# c\n")
    got = args_of("arguments = $(name)\nqueue name,num from rows.txt\n", tmp_path)
    assert got == ['"alpha"', '"#"']


def test_from_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SubmitError, match="can't open file"):
        args_of("queue x from nosuch.txt\n", tmp_path)


def test_matching_sorted_per_pattern_and_kinds(tmp_path: Path) -> None:
    for name in ("b.dat", "a.dat", "z1.dat", "z0.dat"):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub0").mkdir()
    (tmp_path / "sub1").mkdir()
    (tmp_path / "subf").write_text("x")
    assert args_of("arguments = $(f)\nqueue f matching z*.dat b.dat a.dat\n", tmp_path) == [
        '"z0.dat"',
        '"z1.dat"',
        '"b.dat"',
        '"a.dat"',
    ]
    assert args_of("arguments = $(Item)\nqueue matching files *.dat\n", tmp_path) == [
        '"a.dat"',
        '"b.dat"',
        '"z0.dat"',
        '"z1.dat"',
    ]
    assert args_of("arguments = $(Item)\nqueue matching dirs sub*\n", tmp_path) == [
        '"sub0/"',
        '"sub1/"',
    ]
    assert args_of("arguments = $(Item)\nqueue matching sub*\n", tmp_path) == [
        '"sub0/"',
        '"sub1/"',
        '"subf"',
    ]


def test_parse_queue_backward_variable_scan() -> None:
    spec = parse_queue("2 a,b from (x)")
    assert (spec.count, spec.variables, spec.mode, spec.items) == ("2", ["a", "b"], "from", ["x"])
    spec = parse_queue("2*2 v in (q)")
    assert (spec.count, spec.variables) == ("2*2", ["v"])
    assert parse_queue("").count == "1"
    assert parse_queue("item in [1:] (a, b, c)").slice == (1, None, None)


def test_an_item_list_may_start_on_the_statements_line(tmp_path: Path) -> None:
    """As condor_submit (observed with -dry-run): items after an unclosed ``(`` count, and the
    list goes on to a line starting with ``)``."""
    assert args_of("arguments = $(x)\nqueue x in (a b\nc\n)\n", tmp_path) == [
        '"a"', '"b"', '"c"'
    ]  # fmt: skip
    got = args_of("arguments = $(x) $(y)\nqueue x,y from (a 1\nb 2\n)\n", tmp_path)
    assert got == ['"a 1"', '"b 2"']


@pytest.mark.parametrize(
    "statement",
    [
        "queue x in (a b",
        "queue x in (a b\nc d)",
        "queue x in ( a\nb )",
        "queue 1 in (",
        "queue 1 in (\na\n",
    ],
)
def test_an_item_list_never_closed_is_refused(statement: str, tmp_path: Path) -> None:
    """condor_submit: "Reached end of file without finding closing brace" (a ``)`` ends the
    list only at the start of a line).  cedar took the first line's items and went on."""
    with pytest.raises(SubmitError, match="no closing"):
        args_of(f"arguments = $(x)\n{statement}\n", tmp_path)


def test_parse_queue_reads_an_item_list_of_several_lines() -> None:
    assert parse_queue("y from (\n1\n2\n)").items == ["1", "2"]
    assert parse_queue("y in (a\nb c\n)").items == ["a", "b", "c"]
    assert parse_queue("y in (a b)\n").items == ["a", "b"]
    with pytest.raises(SubmitError, match="no closing"):
        parse_queue("y in (a b")
    with pytest.raises(SubmitError, match="no closing"):
        parse_queue("y in (\na")


def test_count_override_and_itemdata(tmp_path: Path) -> None:
    assert len(args_of("arguments = x\n", tmp_path, count=3)) == 3
    got = args_of("arguments = $(n)\n", tmp_path, itemdata=[{"n": "p"}, {"n": "q"}])
    assert got == ['"p"', '"q"']


def test_multiple_queue_statements_emulate_condor_submit(tmp_path: Path) -> None:
    got = args_of("arguments = a\nqueue 2\narguments =\nqueue 1\narguments = b\nqueue\n", tmp_path)
    assert got == ['"a"', '"a"', '"a"', '"b"']


def test_macros(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CEDAR_T", "envval")
    text = (
        "A = xxx\nC = $(A)\nA = yyy\nS = $(S) appended\nP = /x/y/z.tar.gz\n"
        "arguments = $(C) $(UNDEF:dflt) $ENV(CEDAR_T) $ENV(NOPE_NOPE) $Fn(P) $Fnx(P) "
        "$BASENAME(P,.tar.gz) cost$(DOLLAR)5 $$(Kept) $(S) $(JobId)\n"
        "queue\n"
    )
    assert args_of(text, tmp_path) == [
        '"yyy dflt envval UNDEFINED z.tar z.tar.gz z cost$5 $$(Kept) appended 7.0"'
    ]


def test_definition_cycle_fails(tmp_path: Path) -> None:
    with pytest.raises(SubmitError, match="nested too deeply"):
        args_of("A = $(B)\nB = $(A)\narguments = $(A)\nqueue\n", tmp_path)


def test_comments_continuations_and_conditionals(tmp_path: Path) -> None:
    text = (
        "arguments = x # not a comment \\\n  more\n"
        "if defined MODE\narguments = wrong\nelse\nMY.Branch = 2\nendif\n"
        "if version >= 9.0\nMY.Recent = true\nendif\nqueue\n"
    )
    ads = Submit("executable = /bin/echo\n" + text).build(
        1, settings=SubmitSettings(), submit_dir=str(tmp_path), now=1
    )
    assert ads.cluster_ad["Args"] == '"x # not a comment more"'
    assert ads.cluster_ad["Branch"] == "2"
    assert ads.cluster_ad["Recent"] == "true"


@pytest.mark.parametrize("literal", ["25", "5.1", "25.x", "25.1.2.3"])
def test_invalid_version_literal_is_an_error(literal: str, tmp_path: Path) -> None:
    # Spec 06 §1.5 (live): at least major.minor, major >= 6, else "the version literal is invalid".
    text = f"executable = /bin/echo\nif version > {literal}\nMY.X = 1\nendif\nqueue\n"
    with pytest.raises(SubmitError, match="the version literal is invalid"):
        Submit(text).build(1, settings=SubmitSettings(), submit_dir=str(tmp_path), now=1)


def test_version_conditions_agree_with_the_config_reader(tmp_path: Path) -> None:
    from cedar.config import EMULATED_VERSION, Config

    major, minor, _ = EMULATED_VERSION
    # A missing .Z is taken from the emulated version: == X.Y holds, > X.Y does not (spec 06 §1.5).
    for condition, holds in (
        (f"version == {major}.{minor}", True),
        (f"version > {major}.{minor}", False),
    ):
        submitted = Submit(
            f"executable = /bin/echo\nif {condition}\nMY.X = 1\nendif\nqueue\n"
        ).build(1, settings=SubmitSettings(), submit_dir=str(tmp_path), now=1)
        config = Config.from_text(f"if {condition}\nX = 1\nendif\n")
        assert ("X" in submitted.cluster_ad) is holds, condition
        assert (config.get("X") == "1") is holds, condition


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hold = yes\nqueue\n", "must eval to a boolean"),
        ("universe = standard\nqueue\n", "not a supported universe"),
        ("request_disk = 2048B\nqueue\n", "Parse error in expression"),
        ("this is not valid\nqueue\n", "syntax error"),
        (
            "should_transfer_files = NO\nwhen_to_transfer_output = ON_EXIT\nqueue\n",
            "ShouldTransferFiles",
        ),
        ("initialdir = nonexistent_dir\nqueue\n", "No such directory"),
    ],
)
def test_errors(text: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(SubmitError, match=message):
        args_of(text, tmp_path)


def test_missing_executable(tmp_path: Path) -> None:
    with pytest.raises(SubmitError, match="executable"):
        Submit("queue\n").build(1, settings=SubmitSettings(), submit_dir=str(tmp_path))
    with pytest.raises(SubmitError, match="Can't access executable"):
        Submit("executable = nosuch.sh\nqueue\n").build(
            1, settings=SubmitSettings(), submit_dir=str(tmp_path)
        )


def test_mapping_interface() -> None:
    sub = Submit({"executable": "/bin/echo", "+Foo": '"bar"'}, Arguments="hi")
    assert sub["EXECUTABLE"] == "/bin/echo"
    assert sub["MY.Foo"] == '"bar"'
    assert set(sub) == {"executable", "MY.Foo", "Arguments"}
    sub.set_queue("3")
    assert sub.queue_args == "3"
