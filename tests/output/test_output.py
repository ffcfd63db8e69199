"""The output layer against texts recorded from condor_q/condor_status 25.13.2 on a real pool
(the expected strings below are what the real tools printed for the same ad)."""

from __future__ import annotations

import io
import json

import pytest

from cedar.classad_wire import ClassAd
from cedar.classad_wire.jsonfmt import ad_from_json
from cedar.errors import InvalidArgument
from cedar.output import (
    STATUS_TABLES,
    AutoFormat,
    Printf,
    batch_lines,
    hold_code_lines,
    jobads_totals_line,
    long_text,
    q_view,
    totals_lines,
    whole_writer,
    write_ads,
)

JOB = ClassAd.parse_old(
    "\n".join(
        [
            "ClusterId = 1",
            "ProcId = 0",
            'Owner = "testuser"',
            "TransferInputSizeMB = 1",
            "RequestDisk = MAX({ 1024,(TransferInputSizeMB + 1) * 1.25 }) * 1024",
            'Requirements = (TARGET.Arch == "X86_64") && '
            '(versionGE(split(TARGET.CondorVersion)[1],"25.12.0"))',
            'Cmd = "/bin/sleep"',
            'Args = "300"',
            'XA = "a<b>&c\\"d\'e"',
            'XL = { 1,2.5,"x",undefined,error,true }',
            'XR = [ a = 1; b = "x" ]',
            "XF = 1E-05",
            "XE = error",
            "XU = undefined",
            'XT = absTime("2020-01-01T00:00:00-00:00")',
            "JobStatus = 5",
            "QDate = 0",
        ]
    )
)


def af(args: list[str], modifiers: str = "", ads: list[ClassAd] | None = None) -> str:
    return "".join(AutoFormat(args, modifiers).lines(ads or [JOB]))


def fmt(*pairs: tuple[str, str]) -> str:
    return "".join(Printf(list(pairs)).lines([JOB]))


class TestAutoFormat:
    def test_evaluates_expressions(self) -> None:
        # condor_q -af RequestDisk 'ClusterId * 10' Requirements Owner JobBatchName
        assert (
            af(["RequestDisk", "ClusterId * 10", "Requirements", "Owner", "JobBatchName"])
            == "1048576.0 10 error testuser undefined\n"
        )

    def test_values_of_each_type(self) -> None:
        assert (
            af(["XA", "XL", "XR", "XU", "XE", "XT", "XF", "1e30", "0.1", '"a\\"b"'])
            == 'a<b>&c"d\'e { 1,2.5,"x",undefined,error,true } [ a = 1; b = "x" ] undefined '
            'error absTime("2020-01-01T00:00:00-00:00") 1E-05 1E+30 0.1 a"b\n'
        )

    def test_quoted_and_raw(self) -> None:
        assert af(["Owner", "ClusterId*10", "MY.Owner"], "V") == '"testuser" 10 "testuser"\n'
        assert (
            af(["RequestDisk", "ClusterId*10", "Owner", "MY.Owner", "Foo"], "r")
            == "MAX({ 1024,(TransferInputSizeMB + 1) * 1.25 }) * 1024 ClusterId * 10 "
            '"testuser" undefined undefined\n'
        )

    @pytest.mark.parametrize(
        ("modifiers", "expected"),
        [
            ("j", "1.0 1 testuser\n"),
            ("l", "ClusterId = 1 Owner = testuser\n"),
            ("t", "1\ttestuser\n"),
            ("n", "1\n testuser\n"),
            (",", "1, testuser\n"),
            (",n", "1\n testuser\n"),
            (",t", "1,\ttestuser\n"),
            ("ln", "ClusterId = 1\n Owner = testuser\n"),
            ("jl", "ID = 1.0 ClusterId = 1 Owner = testuser\n"),
            ("j,", "1.0, 1, testuser\n"),
            ("jg", "\n1.01testuser\n"),
            ("lrng", '\nClusterId = 1\nOwner = "testuser"\n'),
            ("h", "ClusterId Owner   \n1         testuser\n"),
            ("hl", "ClusterId Owner   \n1         testuser\n"),
            ("h,", "ClusterId, Owner   \n1        , testuser\n"),
            ("jh", " ID ClusterId Owner   \n1.0 1         testuser\n"),
        ],
    )
    def test_modifiers(self, modifiers: str, expected: str) -> None:
        assert af(["ClusterId", "Owner"], modifiers) == expected

    def test_heading_widths(self) -> None:
        # a real counts 21 columns, undefined and lists nothing, strings their length
        assert af(["RequestDisk"], "h") == "RequestDisk          \n1048576.0            \n"
        assert af(["Foo"], "h") == "Foo\nundefined\n"
        assert af(["Cmd"], "h") == "Cmd       \n/bin/sleep\n"
        assert af(["Args"], "h") == "Args\n300 \n"

    def test_projection(self) -> None:
        assert AutoFormat(["RequestDisk", "Owner"], "j").projection() == [
            "ClusterId",
            "Owner",
            "ProcId",
            "RequestDisk",
        ]

    def test_errors(self) -> None:
        with pytest.raises(InvalidArgument):
            AutoFormat(["Owner"], "z")
        with pytest.raises(InvalidArgument):
            AutoFormat(["(("])
        with pytest.raises(InvalidArgument):
            AutoFormat([])


class TestFormat:
    @pytest.mark.parametrize(
        ("pairs", "expected"),
        [
            ((("%d.", "ClusterId"), ("%d\\n", "ProcId")), "1.0\n"),
            ((("[%d]", "Owner"),), ""),
            ((("[%s]", "ClusterId"),), "[1]"),
            ((("[%d]", "Foo"),), ""),
            ((("[%s]", "Foo"),), ""),
            ((("[%v]", "Foo"),), "[undefined]"),
            ((("[%V]", "Owner"),), '["testuser"]'),
            ((("[%v]", "Owner"),), "[testuser]"),
            ((("[%f]", "ClusterId"),), "[1.000000]"),
            ((("[%g]", "RequestDisk"),), "[1.04858e+06]"),
            ((("[%d]", "RequestDisk"),), "[1048576]"),
            ((("[%10s]", "Owner"),), "[  testuser]"),
            ((("[%-10s]", "Owner"),), "[testuser  ]"),
            ((("[%.3s]", "Owner"),), "[tes]"),
            ((("[%5.2f]", "RequestDisk"),), "[1048576.00]"),
            ((("[%s]", "RequestDisk"),), "[MAX({ 1024,(TransferInputSizeMB + 1) * 1.25 }) * 1024]"),
            ((("[%V]", "Requirements"),), "[error]"),
            ((("[%s]", "ClusterId*10"),), ""),
            ((("[%d]", "ClusterId*10"),), "[10]"),
            ((("[%d]", "true"),), "[1]"),
            ((("[%s]", "true"),), ""),
            ((("[%f]", "Owner"),), ""),
            ((("[%i]", "ClusterId"),), "[1]"),
            ((("[%s]", "{1,2}"),), ""),
            ((("[%v]", '{1,"a"}'),), '[{ 1,"a" }]'),
            ((("noconv", "Owner"),), "noconv"),
            ((("[%%%s]", "Owner"),), "[%testuser]"),
            ((("[%d]", "1.7"),), "[1]"),
            ((("[%x]", "255.9"),), "[ff]"),
            ((("[%e]", "1.5"),), "[1.500000e+00]"),
            ((("[%u]", "ClusterId"),), "[1]"),
            ((("[%s]", 'strcat("a","b")'),), "[ab]"),
            ((("[%V]", 'strcat("a","b")'),), '["ab"]'),
            ((("[%s]", "MY.ClusterId"),), ""),
            ((("%s|", "Owner"), ("%d|", "Foo"), ("%s\\n", "Cmd")), "testuser|/bin/sleep\n"),
        ],
    )
    def test_conversions(self, pairs: tuple[tuple[str, str], ...], expected: str) -> None:
        assert fmt(*pairs) == expected


class TestWholeAds:
    def test_long_sorted_case_insensitively(self) -> None:
        ad = ClassAd.parse_old('b = 1\nA = "x"\nC = 2.5')
        assert long_text(ad) == 'A = "x"\nb = 1\nC = 2.5\n\n'

    def test_json_list_and_separators(self) -> None:
        out = io.StringIO()
        write_ads([JOB, JOB], whole_writer("json"), out)
        text = out.getvalue()
        assert text.startswith("[\n{\n") and "\n}\n,\n{\n" in text and text.endswith("\n}\n]\n")
        data = json.loads(text)
        assert list(data[0]) == sorted(data[0], key=str.lower)
        assert data[0]["XE"] == "/Expr(error)/"
        assert data[0]["XT"] == '/Expr(absTime("2020-01-01T00:00:00-00:00"))/'
        assert data[0]["XF"] == 1e-05
        assert ad_from_json(json.dumps(data[0]))["Owner"] == "testuser"

    def test_percent_signs_in_names_and_values_are_printed_as_they_are(self) -> None:
        """The writers fill a per-shape ``%`` template: a ``%`` in a name or value is text."""
        ad = ClassAd()
        ad["A%s"] = "100%d %s"
        ad["b%%"] = 1
        ad["One"] = 1
        assert long_text(ad) == "'A%s' = \"100%d %s\"\n'b%%' = 1\nOne = 1\n\n"
        out = io.StringIO()
        write_ads([ad, ad], whole_writer("json"), out)
        assert json.loads(out.getvalue()) == [{"A%s": "100%d %s", "b%%": 1, "One": 1}] * 2
        single = ClassAd({"Only": "%"})
        assert long_text(single) == 'Only = "%"\n\n'

    def test_json_nothing_for_no_ads(self) -> None:
        out = io.StringIO()
        assert write_ads([], whole_writer("json"), out) == 0
        assert out.getvalue() == ""

    def test_xml(self) -> None:
        out = io.StringIO()
        write_ads([JOB], whole_writer("xml"), out)
        text = out.getvalue()
        assert text.startswith('<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">')
        for line in [
            '    <a n="XA"><s>a&lt;b&gt;&amp;c"d\'e</s></a>',
            '    <a n="XE"><er/></a>',
            '    <a n="XF"><r>1.000000000000000E-05</r></a>',
            '    <a n="XL"><l><i>1</i><r>2.500000000000000E+00</r><s>x</s><un/><er/>'
            '<b v="t"/></l></a>',
            '    <a n="XR"><c>\n        <a n="a"><i>1</i></a>\n        <a n="b"><s>x</s></a>\n'
            "    </c></a>",
            '    <a n="XT"><at>2020-01-01T00:00:00-00:00</at></a>',
            '    <a n="XU"><un/></a>',
            '    <a n="RequestDisk"><e>MAX({ 1024,(TransferInputSizeMB + 1) * '
            "1.250000000000000E+00 }) * 1024</e></a>",
        ]:
            assert line in text
        assert text.endswith("</c>\n</classads>\n")
        empty = io.StringIO()
        write_ads([], whole_writer("xml"), empty)
        assert empty.getvalue().endswith("<classads>\n</classads>\n")


def _job(cluster: int, proc: int, status: int, batch: str | None = None) -> ClassAd:
    ad = ClassAd(
        {
            "ClusterId": cluster,
            "ProcId": proc,
            "JobStatus": status,
            "Owner": "testuser",
            "QDate": 0,
            "TotalSubmitProcs": 2,
            "Cmd": "/bin/sleep",
            "Args": "300",
            "JobPrio": 0,
            "ImageSize": 0,
            "RemoteWallClockTime": 0.0,
        }  # fmt: skip
    )
    if batch:
        ad["JobBatchName"] = batch
    return ad


class TestQTables:
    def test_hold_column_only_when_held(self) -> None:
        running = [_job(2, 0, 2, "mybatch"), _job(2, 1, 2, "mybatch")]
        lines = list(batch_lines(running))
        assert lines[0] == (
            "OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS\n"
        )
        assert lines[1].endswith("      _      2      _      2 2.0-1\n")
        held = [_job(1, 0, 5), _job(1, 1, 5), *running]
        lines = list(batch_lines(held))
        assert "   HOLD  TOTAL" in lines[0]
        assert lines[1].startswith("testuser ID: 1      ")
        assert lines[1].endswith("      _      _      _      2      2 1.0-1\n")

    def test_nobatch_row(self) -> None:
        view = q_view("nobatch")
        row = list(view.lines([_job(1, 0, 5)], now=0))[1]
        assert row.startswith("   1.0   testuser    ")
        assert row.endswith("   0+00:00:00 H  0    0.0 sleep 300\n")

    def test_run_time_is_the_current_or_last_run(self) -> None:
        """As condor_q 25.13.2 printed a job that ran 263 s, was held, released, ran 36 s and
        was held again: a running job's current run, any other job's last run; never the
        runs' sum.  -cputime: the user CPU alone."""
        rerunning = _job(1, 0, 2)
        rerunning.update({"RemoteWallClockTime": 263.0, "LastRemoteWallClockTime": 263.0,
                          "ShadowBday": 1000, "JobCurrentStartDate": 1000})  # fmt: skip
        held = _job(1, 1, 5)
        held.update({"RemoteWallClockTime": 299.0, "LastRemoteWallClockTime": 36.0,
                     "JobCurrentStartDate": 1000, "RemoteUserCpu": 100.0,
                     "RemoteSysCpu": 20.0})  # fmt: skip
        lines = list(q_view("nobatch").lines([rerunning, held], now=1016))
        assert lines[0].endswith(" RUN_TIME ST PRI SIZE CMD\n")
        assert "   0+00:00:16 R " in lines[1] and "   0+00:00:36 H " in lines[2]
        lines = list(q_view("run").lines([rerunning], now=1016))
        assert lines[1].endswith("   0+00:00:16\n")
        cpu = q_view("nobatch", cputime=True)
        assert "RemoteUserCpu" in cpu.projection
        lines = list(cpu.lines([rerunning, held], now=1016))
        assert lines[0].endswith(" CPU_TIME ST PRI SIZE CMD\n")
        assert "   0+00:00:00 R " in lines[1] and "   0+00:01:40 H " in lines[2]
        assert q_view("hold", cputime=True) is q_view("hold")

    def test_hold_codes(self) -> None:
        """condor_q -hold-codes, as it printed these jobs: counted by owner and code/subcode,
        each group shown by its lowest job id (132.0 was held again after 132.1)."""

        def held(
            cluster: int, proc: int, code: int, sub: int | None, when: int, why: str
        ) -> ClassAd:
            ad = _job(cluster, proc, 5)
            ad.update({"HoldReasonCode": code, "EnteredCurrentStatus": when, "HoldReason": why})
            if sub is not None:
                ad["HoldReasonSubCode"] = sub
            return ad

        ads = [
            held(132, 1, 1, 7, 1795778719, "another seven (by user testuser)"),
            held(132, 0, 1, 7, 1795778736, "seven again (by user testuser)"),
            held(126, 1, 15, None, 1795776540, "submitted on hold at user's request"),
            held(132, 2, 1, 3, 1795778719, "three (by user testuser)"),
        ]
        lines = list(hold_code_lines(ads))
        assert (
            lines[0] == "OWNER          CODE/SUB    COUNT  OLDEST_JOB_ID HELD_SINCE  HOLD_REASON\n"
        )
        assert [line[:48] for line in lines[1:]] == [
            "testuser          1/3           1 132.2         ",
            "testuser          1/7           2 132.0         ",
            "testuser         15             1 126.1         ",
        ]
        assert lines[2].endswith(" seven again (by user testuser)\n")
        assert list(hold_code_lines([])) == lines[:1]

    def test_jobads_totals_count_as_the_schedds_summary(self) -> None:
        """-jobads counts with the schedd's summary rule (a job transferring its output is
        running), padded to 138 columns."""
        ads = [_job(1, 0, 6), _job(1, 1, 5), _job(1, 2, 2), _job(1, 3, 9)]
        line = jobads_totals_line(ads)
        assert (
            line
            == (
                "Total for query: 4 jobs; 0 completed, 0 removed, 0 idle, 2 running, 1 held, "
                "0 suspended "
            ).ljust(138)
            + "\n"
        )

    def test_totals(self) -> None:
        summary = ClassAd({"Jobs": 5, "Held": 3, "Running": 2, "AllusersJobs": 7})
        assert totals_lines(summary) == (
            "Total for query: 5 jobs; 0 completed, 0 removed, 0 idle, 2 running, 3 held, "
            "0 suspended \nTotal for all users: 7 jobs; 0 completed, 0 removed, 0 idle, "
            "0 running, 0 held, 0 suspended\n"
        )


class TestStatusTables:
    def test_schedd_table_and_footer(self) -> None:
        ad = ClassAd({"Name": "vm", "Machine": "vm", "TotalRunningJobs": 2, "TotalIdleJobs": 0,
                      "TotalHeldJobs": 3})  # fmt: skip
        assert STATUS_TABLES["schedd"].render([ad]) == (
            "Name            Machine      RunningJobs   IdleJobs   HeldJobs\n"
            "\n"
            "vm              vm                     2          0          3\n"
            "\n"
            "                TotalRunningJobs      TotalIdleJobs      TotalHeldJobs\n"
            "\n"
            "              \n"
            "         Total                 2                  0                  3\n"
        )

    def test_master_table(self) -> None:
        ad = ClassAd({"Name": "vm", "Machine": "vm", "CondorVersion":
                      "$CondorVersion: 25.13.2 2026-11-24 $", "DetectedCpus": 2,
                      "DetectedMemory": 24105, "DaemonStartTime": 1000,
                      "LastHeardFrom": 1005})  # fmt: skip
        assert STATUS_TABLES["master"].render([ad]) == (
            "Name         Version        Cpus   Memory      Uptime    \n"
            "\n"
            "vm           25.13.2           2    23.5 GB    0+00:00:05\n"
        )

    @staticmethod
    def _slots() -> list[ClassAd]:
        """Two claimed, busy slots and two unclaimed idle ones, as the 25.13.2 pool advertised
        them while two jobs ran (no Mips or KFlops: benchmarks off)."""
        return [
            ClassAd({"Name": f"slot{n}@vm", "Machine": "vm", "Cpus": 1, "Memory": 1024,
                     "CondorLoadAvg": 0.0, "KeyboardIdle": 1225, "Disk": 16290704,
                     "Arch": "X86_64", "OpSys": "LINUX", "LastHeardFrom": 1000,
                     "State": "Claimed" if n <= 2 else "Unclaimed",
                     "Activity": "Busy" if n <= 2 else "Idle",
                     "EnteredCurrentState": 1000 - 21 - 5 * (n > 2),
                     "EnteredCurrentActivity": 1000 - 21 - 5 * (n > 2)})
            for n in (4, 3, 2, 1)
        ]  # fmt: skip

    def test_state_table_and_footer(self) -> None:
        """condor_status -state, as it printed these slots (its Total column is always 0)."""
        assert STATUS_TABLES["state"].render(self._slots()) == (
            "Name                               Cpu  Mem  LoadAv   KbdIdle    State     StateTime"
            "  Activ   ActvtyTime\n"
            "\n"
            "slot1@vm                           1          0.000   0+00:20:25 Claimed   0+00:00:21"
            " Busy    0+00:00:21\n"
            "slot2@vm                           1          0.000   0+00:20:25 Claimed   0+00:00:21"
            " Busy    0+00:00:21\n"
            "slot3@vm                           1          0.00"
            "0   0+00:20:25 Unclaimed   0+00:00:26"
            " Idle    0+00:00:26\n"
            "slot4@vm                           1          0.00"
            "0   0+00:20:25 Unclaimed   0+00:00:26"
            " Idle    0+00:00:26\n"
            "\n"
            "               Total Owner Unclaimed Claimed Preem"
            "pting Matched  Drain Backfill BkIdle\n"
            "\n"
            "          Busy     0     0         0       2      "
            "    0       0      0        0      0\n"
            "          Idle     0     0         2       0      "
            "    0       0      0        0      0\n"
            "\n"
            "         Total     0     0         2       2      "
            "    0       0      0        0      0\n"
        )

    def test_server_table_and_footer(self) -> None:
        """condor_status -server: unknown Mips/KFlops fill their columns with ``[???]`` and the
        ads count as malformed; with them, no such line."""
        assert STATUS_TABLES["server"].render(self._slots()) == (
            "Name                               OpSys      Arch     LoadAv Memory   Disk      Mips"
            "    KFlops   \n"
            "\n"
            + "".join(
                f"slot{n}@vm                           LINUX      X8"
                f"6_64    0.000     1024  16290704"
                " [?????] [???????]\n"
                for n in (1, 2, 3, 4)
            )
            + "\n"
            "                  Slots Avail  Memory        Disk        MIPS      KFLOPS\n"
            "\n"
            "  X86_64/LINUX        4     4        4096    65162816           0           0\n"
            "\n"
            "         Total        4     4        4096    65162816           0           0\n"
            "\n"
            "              (Omitted 4 malformed ads in computed attribute totals)\n"
            "\n"
        )
        measured = self._slots()
        for ad in measured:
            ad["Mips"], ad["KFlops"] = 1000, 2000
        text = STATUS_TABLES["server"].render(measured)
        assert "Omitted" not in text and "?" not in text
        assert text.endswith(
            "Total        4     4        4096    65162816        4000        8000\n"
        )

    def test_run_table(self) -> None:
        ad = ClassAd({"Name": "vm", "Machine": "vm", "TotalJobAds": 8, "ShadowsRunning": 2,
                      "TotalSchedulerJobsRunning": 0, "TotalSchedulerJobsIdle": 0,
                      "RecentJobsCompleted": 0, "RecentJobsStarted": 2})  # fmt: skip
        assert STATUS_TABLES["run"].render([ad]) == (
            "Name            TotalJobs Shadows ActiveDAGs IdleDAGs RcntDone RcntStart\n"
            "\n"
            "vm                      8       2          0        0        0         2\n"
        )
        assert (
            STATUS_TABLES["run"].constraint == "((ShadowsRunning + TotalSchedulerJobsRunning) > 0)"
        )

    def test_any_sorted_by_machine_then_name(self) -> None:
        ads = [
            ClassAd(
                {"MyType": "Machine", "TargetType": "Job", "Name": "slot10@vm", "Machine": "vm"}
            ),  # fmt: skip
            ClassAd(
                {"MyType": "Machine", "TargetType": "Job", "Name": "slot9@vm", "Machine": "vm"}
            ),  # fmt: skip
            ClassAd({"MyType": "Accounting", "Name": "<none>"}),
        ]
        lines = STATUS_TABLES["any"].render(ads).splitlines()
        assert lines[0] == f"{'MyType':<18} {'TargetType':<18} {'Name':<41}"
        assert [line.split()[2] for line in lines[2:]] == ["<none>", "slot9@vm", "slot10@vm"]
        assert lines[2].split()[1] == "None"
