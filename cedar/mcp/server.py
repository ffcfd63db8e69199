"""The MCP server: the tool table, the resources and the prompts on the SDK's low-level server.

Every tool call is validated against its argument model, bounded by the settings' timeout and
answered with ``structuredContent`` plus one line of text; whatever goes wrong inside a tool
(a malformed constraint, an unknown job, a refusal, a timeout) is a tool error with a one-line
reason (``isError``), never a protocol error or a traceback.  Progress notifications go out for
the steps of long calls when the client asked for them (a progress token).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS
from pydantic import ValidationError

from cedar.errors import CedarError, CedarTimeout, ClassAdParseError, PermissionDenied
from cedar.mcp import prompts
from cedar.mcp.access import KeptOutputs, pool_access
from cedar.mcp.settings import McpSettings
from cedar.mcp.toolbase import (
    Progress,
    ToolCall,
    ToolFailure,
    ToolSpec,
    ad_json,
    find_job,
)
from cedar.mcp.tools import TOOLS
from cedar.mcp.tools import summary as pool_summary
from cedar.service_core import Caller, PoolAccess

log = logging.getLogger("cedar.mcp")

SERVER_NAME = "cedar"
INSTRUCTIONS = (
    "HTCondor through cedar: list, submit, edit, hold, release and remove jobs, read their "
    "output, and ask why a job does not run (analyze_job_match). You act as the identity the "
    "schedd authenticated (whoami) and see only your own jobs unless you are an admin."
)
JOB_TEMPLATE = "condor://job/{id}"
POOL_SUMMARY_URI = "condor://pool/summary"
SCHEDD_AD_URI = "condor://schedd/ad"


def one_line(text: str, limit: int = 400) -> str:
    """A reason on one line, bounded (a tool error is read by a model, not a person)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def failure_reason(exc: BaseException, timeout: float) -> str:
    """The one line an agent is told for an exception out of a tool."""
    inner = getattr(exc, "exceptions", None)  # a task group's ExceptionGroup of one: its cause
    if isinstance(inner, (list, tuple)) and len(inner) == 1:
        return failure_reason(inner[0], timeout)
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if not errors:
            return "invalid arguments"
        where = ".".join(str(p) for p in errors[0]["loc"]) or "arguments"
        return f"invalid arguments: {where}: {errors[0]['msg']}"
    if isinstance(exc, ToolFailure):
        return str(exc)
    if isinstance(exc, ClassAdParseError):
        return f"malformed constraint or expression: {exc}"
    if isinstance(exc, (TimeoutError, CedarTimeout)):
        return f"timed out (the call is limited to {timeout:g} s)"
    if isinstance(exc, PermissionDenied):
        return f"refused: {exc}"
    if isinstance(exc, CedarError):
        return str(exc) or type(exc).__name__
    return f"internal error ({type(exc).__name__}); the server log has the details"


class CedarMcp:
    """The server's state (settings, pool access) and its SDK handlers."""

    def __init__(self, settings: McpSettings, access: PoolAccess | None = None) -> None:
        self.settings = settings
        #: The service core's pool access: identity, scope, clients (shared with cedar serve
        #: when mounted there).
        self.access = access or pool_access(settings)
        self.outputs = KeptOutputs()

    # ----------------------------------------------------------------- who is calling

    def caller(self, ctx: ServerRequestContext[Any, Any]) -> Caller:
        """The bearer token's holder over HTTP, else the user who started the server."""
        token = bearer_token(ctx.request)
        if token is not None:
            return Caller.from_token(token)
        if ctx.request is not None:  # HTTP without a token: the auth middleware lets none in
            raise MCPError(INVALID_PARAMS, "no bearer token")
        return Caller.local()

    def tool_call(self, caller: Caller, progress: Progress) -> ToolCall:
        """What a handler works with for one call of ``caller``."""
        return ToolCall(self.access, caller, progress, self.settings, self.outputs)

    # ----------------------------------------------------------------- tools

    def tools(self) -> list[ToolSpec]:
        """The tools this server offers (a read-only server drops every changing one)."""
        return [t for t in TOOLS.values() if t.read_only or not self.settings.read_only]

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_description(t) for t in self.tools()])

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = TOOLS.get(params.name)
        if spec is None:
            raise MCPError(INVALID_PARAMS, f"unknown tool {params.name!r}")
        if not spec.read_only and self.settings.read_only:
            return error_result(f"{spec.name} is switched off: this server is read-only")

        async def progress(done: float, total: float | None, message: str | None) -> None:
            try:
                await ctx.session.report_progress(done, total, message)
            except Exception:  # progress is a courtesy: never fail a call for it
                log.debug("progress notification not sent", exc_info=True)

        try:
            with anyio.fail_after(self.settings.timeout):
                args = spec.args.model_validate(params.arguments or {})
                call = self.tool_call(self.caller(ctx), progress)
                result, text = await spec.handler(call, args)
        except MCPError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes a tool error
            log.debug("tool %s failed", spec.name, exc_info=True)
            return error_result(failure_reason(exc, self.settings.timeout))
        structured = result.model_dump(mode="json")
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=structured
        )

    # ----------------------------------------------------------------- resources

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=POOL_SUMMARY_URI,
                    name="pool-summary",
                    description="slots by state, free CPUs and memory, queue totals per user",
                    mime_type="application/json",
                ),
                types.Resource(
                    uri=SCHEDD_AD_URI,
                    name="schedd-ad",
                    description="the schedd's ad as the collector holds it",
                    mime_type="application/json",
                ),
            ]
        )

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=JOB_TEMPLATE,
                    name="job",
                    description="a job's ad (id = cluster.proc)",
                    mime_type="application/json",
                )
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            with anyio.fail_after(self.settings.timeout):
                value = await self._resource(self.caller(ctx), uri)
        except MCPError:
            raise
        except Exception as exc:  # noqa: BLE001 - one line, no traceback
            log.debug("resource %s failed", uri, exc_info=True)
            raise MCPError(INVALID_PARAMS, failure_reason(exc, self.settings.timeout)) from None
        text = json.dumps(value, indent=2)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    async def _resource(self, caller: Caller, uri: str) -> dict[str, Any]:
        if uri == POOL_SUMMARY_URI:
            return (await pool_summary(self.access, caller)).model_dump(mode="json")

        async def nothing(done: float, total: float | None, message: str | None) -> None:
            return None

        call = self.tool_call(caller, nothing)
        if uri == SCHEDD_AD_URI:
            collector = call.collector()
            ads = await collector.query("schedd")
            name = self.settings.schedd_name
            chosen = [ad for ad in ads if name is None or ad.get("Name") == name]
            if not chosen:
                raise ToolFailure("the collector has no ad of that schedd")
            return ad_json(call, chosen[0])
        prefix = JOB_TEMPLATE.split("{", 1)[0]
        if uri.startswith(prefix):
            return ad_json(call, await find_job(call, uri[len(prefix) :], archive=True))
        raise ToolFailure(f"unknown resource {uri}")

    # ----------------------------------------------------------------- prompts

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompts.listed())

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            return prompts.render(params.name, params.arguments or {})
        except KeyError as exc:
            raise MCPError(INVALID_PARAMS, one_line(str(exc.args[0]))) from None

    # ----------------------------------------------------------------- the SDK server

    def build(self) -> Server[Any]:
        """The SDK's low-level server with this object's handlers."""
        return Server(
            SERVER_NAME,
            version=package_version(),
            title="HTCondor (cedar)",
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            get_tool_input_schema=lambda name: (
                TOOLS[name].input_schema() if name in TOOLS else None
            ),
        )


def package_version() -> str:
    """cedar's own version (the server's ``serverInfo``; the one source, :mod:`cedar.version`)."""
    from cedar.version import __version__

    return __version__


def tool_description(spec: ToolSpec) -> types.Tool:
    """The listed form of a tool: schemas generated from its models, and its annotations."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema(),
        output_schema=spec.output_schema(),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=True,
        ),
    )


def error_result(reason: str) -> types.CallToolResult:
    """A tool error: ``isError`` and the reason on one line."""
    return types.CallToolResult(content=[types.TextContent(text=one_line(reason))], is_error=True)


def bearer_token(request: object) -> str | None:
    """The bearer token of an HTTP request (None over stdio or without one)."""
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    value = headers.get("authorization")
    if not isinstance(value, str):
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def build_server(settings: McpSettings, access: PoolAccess | None = None) -> Server[Any]:
    """The SDK server for ``settings`` (the one entry point of both transports)."""
    return CedarMcp(settings, access).build()
