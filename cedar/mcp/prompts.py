"""The prompts: short, structured starting points for three common conversations.

Each names the tools to use in order; the arguments fill in the job or the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import mcp_types as types


@dataclass(frozen=True)
class PromptSpec:
    name: str
    title: str
    description: str
    arguments: tuple[tuple[str, str, bool], ...]  # (name, description, required)
    template: str


PROMPTS: dict[str, PromptSpec] = {
    spec.name: spec
    for spec in (
        PromptSpec(
            "why_is_my_job_idle",
            "Why is my job idle",
            "Find out why a job waits and what to change so it runs.",
            (("job_id", "the idle job, cluster.proc", True),),
            "My HTCondor job {job_id} stays idle. Call get_job for {job_id}, then "
            "analyze_job_match. Explain in two sentences which requirement no slot meets. If "
            "the analysis suggests a request that fits, propose the edit_job call (attribute "
            "and value) and ask me before making it.",
        ),
        PromptSpec(
            "submit_batch_from_table",
            "Submit a batch from a table",
            "Turn a table (one job per row) into one submit description and submit it.",
            (
                ("table", "the rows, CSV with a header line", True),
                ("executable", "the program each row runs", True),
            ),
            "Submit one job per row of this table with executable {executable}. Write one "
            "submit description whose queue statement reads the rows (queue <columns> from "
            "( ... )), using the header names as macros in arguments. Show it to me, then "
            "call submit_job, then query_jobs for the new cluster.\n\nTable:\n{table}",
        ),
        PromptSpec(
            "what_went_wrong",
            "What went wrong with my completed job",
            "Explain a job's failure from its ad, its history and its output.",
            (("job_id", "the job, cluster.proc", True),),
            "Job {job_id} finished but did not do what I expected. Call get_job (or "
            "query_job_archive with ClusterId/ProcId if it left the queue), look at ExitCode, "
            "ExitBySignal, HoldReason and RemoveReason, then get_job_output and read the end of "
            "its stderr. Tell me the most likely cause in a few sentences and what to change.",
        ),
    )
}


def listed() -> list[types.Prompt]:
    """The prompts as ``prompts/list`` shows them."""
    return [
        types.Prompt(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            arguments=[
                types.PromptArgument(name=n, description=d, required=r)
                for n, d, r in spec.arguments
            ],
        )
        for spec in PROMPTS.values()
    ]


def render(name: str, arguments: dict[str, str]) -> types.GetPromptResult:
    """One prompt filled in; KeyError (with a message) for an unknown prompt or argument."""
    spec = PROMPTS.get(name)
    if spec is None:
        raise KeyError(f"unknown prompt {name!r}")
    values: dict[str, str] = {}
    for arg, _, required in spec.arguments:
        value = arguments.get(arg)
        if value is None and required:
            raise KeyError(f"prompt {name} needs the argument {arg!r}")
        values[arg] = (value or "")[:20000]
    text = spec.template.format(**values)
    return types.GetPromptResult(
        description=spec.description,
        messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
    )
