"""The text ``condor_q -analyze`` / ``-better-analyze[:summary|:reverse|:priority]`` prints,
rendered from the structured results (spec 08 §7.3-§7.5, checked against the real tool).
"""

from __future__ import annotations

from collections.abc import Sequence

from cedar.analysis.model import ClauseResult, JobAnalysis, SlotAnalysis, SummaryRow
from cedar.output.dates import ctime

#: The width the reference breaks expressions at when its output is not a terminal.
WIDTH = 80


def banner(name: str, address: str) -> str:
    """``-- Schedd: <Name> : <address up to '?'>?...`` with the two leading empty lines."""
    short = address.split("?", 1)[0]
    if short.endswith(">"):
        short = short[:-1]
    return f"\n\n-- Schedd: {name} : {short}?...\n"


def _chunks(text: str) -> list[tuple[str, int]]:
    """``text`` cut after each ``&&``/``||`` (outside strings), with the parenthesis depth at
    each cut."""
    chunks: list[tuple[str, int]] = []
    depth, start, i, n = 0, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif text.startswith(("&& ", "|| "), i) and i > 0 and text[i - 1] == " ":
            chunks.append((text[start : i + 2], depth))
            start = i + 2
            i += 2
            continue
        i += 1
    chunks.append((text[start:], depth))
    return chunks


def pretty(text: str, indent: int = 4, width: int = WIDTH) -> str:
    """An expression broken into lines the way the reference prints it: a line is broken after
    an ``&&``/``||`` when the next piece would not fit; the continuation is indented by two
    more spaces per open parenthesis."""
    pieces = _chunks(text)
    line = " " * indent + pieces[0][0]
    lines: list[str] = []
    depth = pieces[0][1]
    for piece, after in pieces[1:]:
        if len(line) + len(piece) > width:
            lines.append(line)
            line = " " * (indent + 2 * depth) + piece[1:]  # one separating space
        else:
            line += piece
        depth = after
    lines.append(line)
    return "\n".join(lines)


def _step(number: int, width: int) -> str:
    return f"[{number}]".ljust(width)


def numbered_list(clauses: Sequence[ClauseResult]) -> str:
    """``    [N]    : clause`` for every clause, then an empty line."""
    return "".join(f"    {_step(c.step, 6)} : {c.text}\n" for c in clauses) + "\n"


def clause_table(clauses: Sequence[ClauseResult], what: str, heading: str, drained: bool) -> str:
    """``The Requirements expression for <what> reduces to these conditions:`` and the table."""
    out = [f"The Requirements expression for {what} reduces to these conditions:\n\n"]
    if drained:
        out.append("         " + f"{heading}s" + "      If    \n")  # observed, spec 08 is off
        out.append("Step   Matched   Drained  Condition\n")
        out.append("----- --------- --------- ---------\n")
    else:
        out.append("       " + f"{heading:>5}s" + "\n")
        out.append("Step   Matched  Condition\n")
        out.append("----- --------- ---------\n")
    for c in clauses:
        if not c.shown:
            continue
        step = _step(c.step, 5)
        if c.constant is not None:
            count = f"{c.constant:>9}" + (f" {'':>9}" if drained else "")
        elif drained:
            count = f"{c.matched or 0:9d} {c.matched_if_drained or 0:9d}"
        else:
            count = f"{c.matched or 0:9d}"
        out.append(f"{step} {count}  {c.label}\n")
    out.append("\n")
    return "".join(out)


def _attributes(title: str, values: Sequence[tuple[str, str, str | None]]) -> str:
    lines = "".join(
        f"    {name} = {value}{f' ({unit})' if unit else ''}\n" for name, value, unit in values
    )
    return f"{title}\n\n{lines}"


def requirements_part(a: JobAnalysis) -> str:
    """Pretty expression, numbered clauses, job (and slot) attributes, clause table."""
    jid = f"{a.cluster}.{a.proc:03d}"
    out = [f"The Requirements expression for job {jid} is\n\n", pretty(a.requirements), "\n\n"]
    out.append(numbered_list(a.clauses))
    out.append(
        _attributes(
            f"Job {jid} defines the following attributes:",
            [(v.name, v.value, v.unit) for v in a.job_attributes],
        )
    )
    if a.single_slot:
        out.append(
            "\n"
            + _attributes(
                f"{a.single_slot} has the following attributes:",
                [(v.name, v.value, v.unit) for v in a.slot_attributes],
            )
        )
    out.append("\n")
    out.append(clause_table(a.clauses, f"job {jid}", "Slot", a.drained_columns))
    return "".join(out)


def summary_part(a: JobAnalysis, priority_mode: bool = False) -> str:
    """The "Run analysis summary" block, the warning, the job state and the match history."""
    c = a.counts
    jid = f"{a.cluster:03d}.{a.proc:03d}"
    out: list[str] = []
    with_priority = priority_mode and a.priority is not None
    if with_priority:
        out.append(f"Submittor {a.submitter} has a priority of {a.priority:.3f}\n")
    considering = "considering" if with_priority else "ignoring"
    out.append(
        f"\n{jid}:  Run analysis summary {considering} user priority.  "
        f"Of {c.slots} slots on {c.machines} machines,\n"
    )
    line = "  {:5d} slots {}\n".format
    out.append(line(c.rejected_by_job, "are rejected by your job's requirements"))
    out.append(line(c.rejecting_job, "reject your job because of their own requirements"))
    if with_priority:
        star = "(*)" if a.nice_user else ""
        out.append(line(c.running_yours, "match and are already running one of your jobs"))
        out.append(
            line(
                c.better_priority,
                f"match but are serving users with a better priority in the pool{star}",
            )
        )
        out.append(
            line(c.will_not_preempt, "match but will not currently preempt their existing job")
        )
        out.append(line(c.offline, "match but are currently offline") + "\n")
    else:
        if c.running_yours:
            out.append(line(c.running_yours, "match and are already running your jobs"))
        if c.running:
            out.append(line(c.serving_others, "match but are serving other users"))
        if c.offline:
            out.append(line(c.offline, "match but are currently offline"))
    out.append(line(c.available_now, "match and are willing to run your job"))
    if c.available_if_drained:
        out.append(line(c.available_if_drained, "would match if drained"))
    if with_priority and a.nice_user:
        out.append(
            '\n  (*)  Since this is a "nice-user" job, it has a very low priority and is '
            "unlikely\n       to preempt other jobs.\n"
        )
    if c.job_matches == 0 or c.both_match == 0:
        out.append("\nWARNING:  Be advised:\n")
        if c.job_matches == 0:
            out.append("   No machines matched the job's constraints\n")
        else:
            out.append(
                "   Job did not match any machines' constraints\n"
                "   To see why, pick a machine that you think should match and add\n"
                "     -reverse -machine <name>\n"
                "   to your query.\n"
            )
    out.append("\n")
    if a.state:
        out.append(f"\n{jid}:  {a.state}\n\n")
    out.append(schedd_policy_text(a))
    out.append(match_history(a))
    return "".join(out)


def schedd_policy_text(a: JobAnalysis) -> str:
    """Local/scheduler universe: what the schedd's start policy said (observed wording)."""
    attr = a.schedd_attribute
    if attr is None:
        return ""
    if a.schedd_policy == "no ad":
        return (
            "WARNING: A schedd ClassAd is needed to do analysis for scheduler or Local "
            "universe jobs.\n\n\n"
        )
    if a.schedd_policy in ("true", "false"):
        return f"This schedd's {attr} evalutes to {a.schedd_policy} for this job.\n\n\n"
    return f"This schedd's {attr} policy failed to evalute for this job.\n\n\n"


def match_history(a: JobAnalysis) -> str:
    """``Last successful match: ...`` and the autocluster lines (spec 08 §7.3)."""
    h = a.history
    out: list[str] = []
    if h.last_match_time:
        out.append(f"Last successful match: {ctime(h.last_match_time)}\n")
    elif h.last_rejection_time:
        out.append("No successful match recorded.\n")
    job_match = h.last_match_time or 0
    if (h.last_rejection_time or 0) > job_match:
        neg = f" from {h.last_rejection_negotiator}" if h.last_rejection_negotiator else ""
        out.append(f"Last failed match: {ctime(h.last_rejection_time or 0)}{neg}\n")
        out.append(f"Reason for last match failure: {h.last_rejection_reason or ''}\n")
    elif h.autocluster_id is not None:
        if (h.autocluster_last_rejection_time or 0) > job_match:
            ac_neg = h.autocluster_last_rejection_negotiator
            out.append(
                "Last failed match for this autocluster: "
                f"{ctime(h.autocluster_last_rejection_time or 0)}"
                f"{f' from {ac_neg}' if ac_neg else ''}\n"
            )
            out.append(f"\tReason: {h.autocluster_last_rejection_reason or ''}\n")
        if h.autocluster_last_match_time:
            out.append(
                "Last successful match for this autocluster: "
                f"{ctime(h.autocluster_last_match_time)}\n"
            )
        if h.autocluster_running:
            out.append(f"This autocluster currently has {h.autocluster_running} running jobs.\n")
        elif h.autocluster_completed:
            out.append(
                f"This autocluster currently has {h.autocluster_running or 0} running and "
                f"{h.autocluster_completed} completed jobs.\n"
            )
    return "".join(out)


def render_job(a: JobAnalysis, better: bool = True, priority_mode: bool = False) -> str:
    """One job's analysis as ``condor_q -analyze``/``-better-analyze`` prints it (no banner)."""
    out = ""
    if better or a.requirements_needed:
        out = requirements_part(a)
        if a.schedd_attribute is not None:
            out += "WARNING: Analysis is not complete for Scheduler or Local universe jobs.\n\n"
    return out + summary_part(a, priority_mode)


SUMMARY_HEADER = (
    "               Autocluster    Matches     Machine     Running     Serving            \n"
    " JobId        Members/Idle Requirements Rejects Job  Users Job  Other User Available Owner\n"
    "------------- ------------ ------------ ----------- ----------- ---------- --------- -----\n"
)


def render_summary(rows: Sequence[SummaryRow], slots: int) -> str:
    """``-better-analyze:summary``: one row per autocluster (no banner)."""
    out = [f"Analyzing matches for {slots} slots\n", SUMMARY_HEADER]
    for r in rows:
        running = f"{r.running}/{r.running_yours}" if r.running else f"{r.running_yours}"
        members = f"{r.members}/{r.idle}"
        out.append(
            f"{r.job_id:<13} {members:<12} {r.matches_requirements:12d} "
            f"{r.rejected_by_slots:11d} {running:>11} {r.serving_others:10d} "
            f"{r.available:9d} {r.owner or ''}\n"
        )
    return "".join(out)


def render_reverse(s: SlotAnalysis, expressions: Sequence[tuple[str, str]]) -> str:
    """``-better-analyze:reverse`` for one slot (no banner); ``expressions`` are the slot's
    Requirements and the attributes it expands (``START``, ``WithinResourceLimits``)."""
    out = [
        f"\n-- Slot: {s.slot} : Analyzing matches for {s.jobs} Jobs in {s.autoclusters} "
        "autoclusters\n\n"
    ]
    out.append("The Requirements expression for this slot is\n\n")
    out.append(pretty_reverse(s.requirements) + "\n\n")
    for name, text in expressions:
        out.append(f"  {name} is\n{pretty_reverse(text)}\n\n")
    out.append(numbered_list(s.clauses))
    out.append(
        _attributes(
            "This slot defines the following attributes:",
            [(v.name, v.value, v.unit) for v in s.slot_attributes],
        )
    )
    out.append("\n")
    if s.job_id is not None:
        out.append(
            _attributes(
                f"Job {s.job_id} has the following attributes:",
                [(v.name, v.value, v.unit) for v in s.job_attributes],
            )
        )
        out.append("\n")
    out.append(clause_table(s.clauses, "this slot", "Cluster", False))
    share = 100.0 * s.both_match / s.jobs if s.jobs else 0.0
    out.append(f"{s.slot}: Run analysis summary of {s.jobs} jobs.\n")
    out.append(f"{s.both_match:5d} ({share:.2f} %) match both slot and job requirements.\n")
    out.append(f"{s.slot_matches:5d} match the requirements of this slot.\n")
    out.append(f"{s.job_matches:5d} have job requirements that match this slot.\n")
    return "".join(out)


def pretty_reverse(text: str) -> str:
    """The slot's expressions as the reverse analysis prints them: its first line holds only
    the first piece (observed, spec 08 §11 item 5), the rest follows :func:`pretty`."""
    pieces = _chunks(text)
    if len(pieces) == 1:
        return "    " + text
    head, depth = pieces[0]
    rest = text[len(head) :].lstrip(" ")
    return "    " + head + "\n" + pretty(rest, indent=4 + 2 * depth)


__all__ = [
    "SUMMARY_HEADER",
    "WIDTH",
    "banner",
    "clause_table",
    "match_history",
    "numbered_list",
    "pretty",
    "pretty_reverse",
    "render_job",
    "render_reverse",
    "render_summary",
    "requirements_part",
    "summary_part",
]
