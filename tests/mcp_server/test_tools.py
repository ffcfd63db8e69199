"""The tools through the SDK's own client, against the mock pool (in-process server)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import trio
from mcp import Client, MCPDeprecationWarning

from cedar.commands import Collector
from cedar.daemons.pool import MockPool, pool_policy
from cedar.mcp import McpSettings, build_server, pool_access
from cedar.mcp.tools import TOOLS
from tests.loopback import serving, silent
from tests.mcp_server.conftest import claimtobe
from tests.mcp_server.helpers import UNCALLED, every_tool, run_client, text, wait_status

SCRIPT = {"name": "run.sh", "content": "#!/bin/sh\necho hello\n", "executable": True}


def test_every_tool_has_an_output_schema_and_annotations() -> None:
    for spec in TOOLS.values():
        schema = spec.output_schema()
        assert schema.get("type") == "object" and schema.get("properties"), spec.name
        assert spec.input_schema().get("type") == "object", spec.name
    assert len(TOOLS) >= 29


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_listing_shows_schemas_annotations_resources_prompts(pool: MockPool, mode: str) -> None:
    async def work(client: Client) -> None:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == set(TOOLS)
        for tool in tools:
            assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
            notes = tool.annotations
            assert notes is not None, tool.name
            for hint in (notes.read_only_hint, notes.destructive_hint, notes.idempotent_hint):
                assert isinstance(hint, bool), tool.name
        by_name = {t.name: t for t in tools}
        assert by_name["remove_jobs"].annotations.destructive_hint is True  # type: ignore[union-attr]
        assert by_name["query_jobs"].annotations.read_only_hint is True  # type: ignore[union-attr]
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert resources == {"condor://pool/summary", "condor://schedd/ad"}
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["condor://job/{id}"]
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert prompts == {"why_is_my_job_idle", "submit_batch_from_table", "what_went_wrong"}
        prompt = await client.get_prompt("why_is_my_job_idle", {"job_id": "7.0"})
        assert "analyze_job_match" in prompt.messages[0].content.text  # type: ignore[union-attr]
        if mode == "legacy":  # ping is gone from the 2026-07-28 revision; older eras have it
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.send_ping()

    run_client(pool, claimtobe("lister"), work, mode=mode)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_whole_session_calls_every_tool(pool: MockPool, mode: str) -> None:
    user = f"sess{mode}"
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def work(client: Client) -> dict[str, Any]:
        return await every_tool(client, user, on_progress)

    seen = run_client(pool, claimtobe(user), work, mode=mode)
    assert set(seen) == set(TOOLS) - UNCALLED
    for name, result in seen.items():
        assert not result.is_error, (name, text(result))
        assert isinstance(result.structured_content, dict), name
    assert progress and progress[-1][0] == progress[-1][1] == 2


def test_bad_input_is_a_tool_error_with_one_line(pool: MockPool) -> None:
    async def work(client: Client) -> dict[str, str]:
        reasons = {}
        cases = {
            "malformed": ("query_jobs", {"constraint": "true) || (true"}),
            "unknown_job": ("get_job", {"job_id": "999999.0"}),
            "bad_id": ("get_job", {"job_id": "12"}),
            "extra_arg": ("whoami", {"surprise": 1}),
            "limit": ("query_jobs", {"limit": 100000}),
            "bad_value": ("edit_job", {"job_id": "1.0", "attribute": "X", "value": "(("}),
            "bad_file": (
                "submit_job",
                {"description": "queue", "input_files": [{"name": "../x", "content": ""}]},
            ),
            "bad_submit": ("submit_job", {"description": "executable = \nqueue banana"}),
            "hold": (
                "submit_job",
                {"description": "executable = run.sh\nhold = true\nqueue", "input_files": [SCRIPT]},
            ),
        }
        before = set(pool.schedd.queue.clusters)
        for case, (name, args) in cases.items():
            result = await client.call_tool(name, args)
            assert result.is_error, case
            reasons[case] = text(result)
        assert set(pool.schedd.queue.clusters) == before  # no refused submission was queued
        submitted = await client.call_tool(
            "submit_job", {"description": "executable = run.sh\nqueue", "input_files": [SCRIPT]}
        )
        job = f"{submitted.structured_content['cluster']}.0"
        refused = await client.call_tool("release_job", {"job_id": job})  # it is not held
        assert refused.is_error
        reasons["refused"] = text(refused)
        return reasons

    reasons = run_client(pool, claimtobe("clumsy"), work)
    for case, reason in reasons.items():
        assert "\n" not in reason and "Traceback" not in reason and reason, case
    assert reasons["malformed"].startswith("malformed constraint")
    assert "no job 999999.0" in reasons["unknown_job"]
    assert reasons["bad_id"].startswith("invalid arguments: job_id")
    assert reasons["extra_arg"].startswith("invalid arguments: surprise")
    assert "plain file name" in reasons["bad_file"]
    assert "refused by the schedd" in reasons["refused"]
    # condor_submit -spool's refusal (25.13.2), and what to do instead; nothing was queued
    assert reasons["hold"].startswith("Cannot set hold to 'true' when using -remote or -spool")
    assert "defer_input=true" in reasons["hold"]


def test_a_task_groups_error_is_told_by_its_cause() -> None:
    """A failure inside a task group (a file transfer's progress pump) reaches the agent as
    itself, not as "internal error (ExceptionGroup)"."""
    import builtins

    from cedar.errors import ConnectionClosed
    from cedar.mcp.server import failure_reason

    ExceptionGroup = getattr(builtins, "ExceptionGroup", None)  # noqa: N806
    if ExceptionGroup is None:  # Python 3.10: the backport anyio and trio bring
        from exceptiongroup import ExceptionGroup

    group = ExceptionGroup("one", [ExceptionGroup("two", [ConnectionClosed("peer went away")])])
    assert failure_reason(group, 1.0) == "peer went away"
    two = ExceptionGroup("two", [ValueError("a"), ValueError("b")])
    assert failure_reason(two, 1.0).startswith("internal error (ExceptionGroup)")


def test_a_daemon_that_never_answers_is_a_timeout_not_a_hang() -> None:
    with serving(silent()) as hung:
        settings = McpSettings(pool=hung, timeout=1.5, daemon_timeout=30)
        server = build_server(settings, pool_access(settings, claimtobe("patient")))

        async def main() -> Any:
            async with Client(server) as client:
                with trio.fail_after(120):  # the tool gives up after 1.5 s: a bound for a hang
                    return await client.call_tool("pool_summary", {})

        result = trio.run(main)
    assert result.is_error
    assert text(result) == "timed out (the call is limited to 1.5 s)"


def test_a_read_only_server_offers_no_changing_tool(pool: MockPool) -> None:
    async def work(client: Client) -> tuple[set[str], Any]:
        names = {t.name for t in (await client.list_tools()).tools}
        refused = await client.call_tool("remove_jobs", {"constraint": "true"})
        return names, refused

    names, refused = run_client(pool, claimtobe("reader"), work, read_only=True)
    assert names == {n for n, spec in TOOLS.items() if spec.read_only}
    assert "submit_job" not in names and "query_jobs" in names
    assert refused.is_error and "read-only" in text(refused)


def test_owner_scoping_over_stdio_and_admins(pool: MockPool) -> None:
    async def submit(client: Client) -> str:
        result = await client.call_tool(
            "submit_job", {"description": "executable = run.sh\nqueue", "input_files": [SCRIPT]}
        )
        return f"{result.structured_content['cluster']}.0"

    job = run_client(pool, claimtobe("alice"), submit)

    async def snoop(client: Client) -> dict[str, Any]:
        listed = await client.call_tool("query_jobs", {"constraint": "true || true"})
        return {
            "ids": {f"{j['ClusterId']}.{j['ProcId']}" for j in listed.structured_content["jobs"]},
            "get": await client.call_tool("get_job", {"job_id": job}),
            "hold": await client.call_tool("hold_job", {"job_id": job}),
            "bulk": await client.call_tool("remove_jobs", {"constraint": "true", "confirm": True}),
        }

    bob = run_client(pool, claimtobe("bob"), snoop)
    assert job not in bob["ids"]
    assert bob["get"].is_error and bob["hold"].is_error
    assert job not in {r["job_id"] for r in bob["bulk"].structured_content["results"]}
    admin = run_client(pool, claimtobe("carol"), snoop, admins=frozenset({"carol"}))
    assert job in admin["ids"] and not admin["get"].is_error


@pytest.mark.parametrize("serve_url", [None, "http://serve.example:8080"])
def test_large_output_is_a_link_to_cedar_serve_or_cut(
    pool: MockPool, serve_url: str | None
) -> None:
    async def work(client: Client) -> Any:
        sub = await client.call_tool(
            "submit_job",
            {
                "description": "executable = run.sh\noutput = out.txt\nqueue",
                "input_files": [SCRIPT],
            },
        )
        job = f"{sub.structured_content['cluster']}.0"
        await wait_status(client, job, 4)
        output = await client.call_tool("get_job_output", {"job_id": job})
        return job, {f["name"]: f for f in output.structured_content["files"]}

    job, files = run_client(pool, claimtobe("bigout"), work, inline_limit=16, serve_url=serve_url)
    big = files["out.txt"]
    assert big["size"] > 16
    if serve_url:
        assert big["link"] == f"{serve_url}/api/v1/jobs/{job}/files/out.txt"
        assert big["content"] is None
    else:
        assert big["truncated"] and len(big["content"]) == 16 and big["link"] is None


def test_a_job_is_looked_up_by_its_id_before_its_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedd evaluates the constraint on every job it scans: the id's two integer
    comparisons come first, the owner's scope last (an admin's lookup has none)."""
    from cedar.classad_wire import unparse
    from cedar.service_core import Caller, Identity

    access = pool_access(McpSettings(admins=frozenset({"root"})))
    caller = Caller.local()

    async def scope_of(user: str) -> str:
        async def whoami(_caller: Any) -> Identity:
            return Identity(authenticated=True, user=user, method="FS")

        monkeypatch.setattr(access, "whoami", whoami)
        return unparse(await access.scoped_job(caller, 12, 3))

    assert trio.run(scope_of, "alice@pool") == (
        '(ClusterId == 12 && ProcId == 3) && (User == "alice@pool")'
    )
    assert trio.run(scope_of, "root@pool") == "(ClusterId == 12 && ProcId == 3)"


def _free_form(schema: Any) -> bool:
    """Whether a JSON schema holds an object of any members (an ad) or free text lists."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" and schema.get("additionalProperties") is True:
            return True
        return any(_free_form(value) for value in schema.values())
    if isinstance(schema, list):
        return any(_free_form(value) for value in schema)
    return False


def test_tools_returning_user_text_say_it_is_untrusted() -> None:
    """Attack (issue 37): text from job attributes reached an agent unmarked.  Every tool whose
    result holds an ad (an object of any members) says in its description that the values are
    data written by users, never instructions."""
    from cedar.mcp.tools import UNTRUSTED_NOTE

    marked = {name for name, spec in TOOLS.items() if UNTRUSTED_NOTE in spec.description}
    with_ads = {name for name, spec in TOOLS.items() if _free_form(spec.output_schema())}
    assert with_ads and with_ads <= marked, with_ads - marked
    assert {"query_jobs", "get_job", "tail_job", "get_job_output"} <= marked


SECRET = "s3cr3t-in-the-schedds-ads"


def test_no_tool_reveals_a_private_attribute(
    pool: MockPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole session (every tool) against a schedd that sends private attributes in every ad
    (as an older or differently configured daemon would): none reaches any result, each is
    ``<REDACTED>``, through the core's one mapping.  A new tool that maps ads its own way fails
    here."""
    import cedar.daemons.schedd as schedd
    from cedar.classad_wire import ClassAd
    from cedar.service_core.settings import DEFAULT_PRIVATE_ATTRS

    original = schedd.put_classad

    def leaky(writer: Any, ad: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["exclude_private"] = False
        if isinstance(ad, ClassAd) and "ClusterId" in ad:
            ad = ad.copy()
            for name in DEFAULT_PRIVATE_ATTRS:
                ad[name] = f"{SECRET}-{name}"
        return original(writer, ad, *args, **kwargs)

    monkeypatch.setattr(schedd, "put_classad", leaky)

    async def work(client: Client) -> dict[str, Any]:
        return await every_tool(client, "leaktest")

    seen = run_client(pool, claimtobe("leaktest"), work)
    assert set(seen) == set(TOOLS) - UNCALLED
    shown = "".join(result.model_dump_json() for result in seen.values())
    assert SECRET not in shown
    assert shown.count("<REDACTED>") >= len(DEFAULT_PRIVATE_ATTRS)


@pytest.mark.parametrize(
    ("name", "ad", "found"),
    [
        ("SCHEDD_INTERVAL", "config", "SCHEDD_INTERVAL"),
        ("max_jobs_running", "config", "MAX_JOBS_RUNNING"),
        ("RequestMemory", "job", "RequestMemory"),
        ("should_transfer_files", "job", "ShouldTransferFiles"),
        ("request_memory", "job", "RequestMemory"),
    ],
)
def test_describe_knows_knobs_attributes_and_submit_commands(
    name: str, ad: str, found: str
) -> None:
    """``describe_attribute`` looks a name up as an attribute, a submit command, then a knob
    (cedar's knob table): issue 37 asked for SCHEDD_INTERVAL, RequestMemory and
    should_transfer_files."""
    from cedar.mcp.describe import describe

    entry = describe(name)
    assert entry is not None and entry.ad == ad and entry.name == found
    if ad == "config":
        assert entry.meaning.startswith("a configuration knob")
    assert describe("NO_SUCH_THING_AT_ALL") is None


def test_advertise_ad_as_an_allowed_user() -> None:
    """An ad sent as the caller (JSON here) is in the collector; invalidate removes it; an ad
    without MyType, or one that does not parse, is refused before anything is sent."""
    policy = pool_policy(allow={"READ": ["*"], "WRITE": ["*"], "DAEMON": ["advertiser@*"]})

    async def work(client: Client) -> list[str]:
        ad = '{"MyType": "CedarMcpTest", "Name": "mcp-test", "Purpose": "a test"}'
        sent = await client.call_tool("advertise_ad", {"ad": ad})
        assert not sent.is_error, text(sent)
        assert sent.structured_content == {
            "hints": [], "my_type": "CedarMcpTest", "name": "mcp-test",
            "command": "UPDATE_AD_GENERIC", "invalidated": False,
        }  # fmt: skip
        found = [a.get("Purpose") for a in Collector(running.host_port, security=who).query("any")
                 if a.get("Name") == "mcp-test"]  # fmt: skip
        gone = await client.call_tool("advertise_ad", {"ad": ad, "invalidate": True})
        assert not gone.is_error, text(gone)
        after = [
            a
            for a in Collector(running.host_port, security=who).query("any")
            if a.get("Name") == "mcp-test"
        ]
        assert not after
        bad = await client.call_tool("advertise_ad", {"ad": "Name = 1"})
        assert bad.is_error and "MyType" in text(bad)
        broken = await client.call_tool("advertise_ad", {"ad": "{not json"})
        assert broken.is_error and "does not parse" in text(broken)
        return found

    async def refused(client: Client) -> str:
        sent = await client.call_tool("advertise_ad", {"ad": '[MyType = "X"; Name = "y"]'})
        assert sent.is_error
        return text(sent)

    who = claimtobe("advertiser")
    with MockPool(policy=policy).run_in_thread() as running:
        assert run_client(running, who, work) == ["a test"]
        assert "DENIED" in run_client(running, claimtobe("someone"), refused)


def test_edit_jobs_refuses_protected_attributes_before_counting(pool: MockPool) -> None:
    async def work(client: Client) -> list[str]:
        said = []
        for name in ("JobUniverse", "Owner", "jobstatus"):
            args = {"constraint": "true", "attribute": name, "value": "1", "confirm": True}
            result = await client.call_tool("edit_jobs", args)
            assert result.is_error and result.structured_content is None
            said.append(text(result))
        return said

    for line in run_client(pool, claimtobe("protect"), work):
        assert "cannot be edited" in line or "refused" in line, line


def test_history_quantiles_are_nearest_rank() -> None:
    from cedar.mcp.pool_tools import quantiles

    spread = quantiles([float(v) for v in range(100, 0, -1)])  # 1..100, unordered
    assert (spread.min, spread.p25, spread.median, spread.p75, spread.p95, spread.max) == (
        1, 25, 50, 75, 95, 100
    )  # fmt: skip
    assert quantiles([7.0]).median == 7 and quantiles([]).count == 0
