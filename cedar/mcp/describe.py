"""What cedar knows of job and machine attributes, for ``describe_attribute``.

Written for cedar in its own words (never HTCondor's manual text): the type, what the value is
for, and the submit command that sets it.  Status codes come from :mod:`cedar.numbers`, the one
place they live.
"""

from __future__ import annotations

from dataclasses import dataclass

from cedar.numbers import JobStatus


@dataclass(frozen=True)
class Attribute:
    """One attribute: ``ad`` is ``job`` or ``machine``."""

    name: str
    type: str
    meaning: str
    ad: str = "job"
    submit_command: str | None = None
    values: dict[str, str] | None = None


def _status_values() -> dict[str, str]:
    seen: dict[int, str] = {}
    for member in JobStatus:
        seen.setdefault(int(member), member.name.lower().replace("_", " "))
    return {str(code): name for code, name in sorted(seen.items())}


_TABLE = [
    Attribute("ClusterId", "integer", "the cluster number the schedd gave a submission"),
    Attribute("ProcId", "integer", "the job's number within its cluster (from 0)"),
    Attribute("Owner", "string", "the user name the job runs for, set by the schedd"),
    Attribute("User", "string", "the job's owner as user@domain"),
    Attribute("JobStatus", "integer", "where the job is in its life", values=_status_values()),
    Attribute("Cmd", "string", "the program the job runs", submit_command="executable"),
    Attribute("Args", "string", "the program's arguments", submit_command="arguments"),
    Attribute("Iwd", "string", "the directory the job starts in", submit_command="initialdir"),
    Attribute("Out", "string", "where the job's standard output goes", submit_command="output"),
    Attribute("Err", "string", "where the job's standard error goes", submit_command="error"),
    Attribute("In", "string", "the file fed to the job's standard input", submit_command="input"),
    Attribute("UserLog", "string", "the job's event log file", submit_command="log"),
    Attribute(
        "ShouldTransferFiles",
        "string",
        "whether the job's files are moved to the machine that runs it: YES, NO or IF_NEEDED",
        submit_command="should_transfer_files",
    ),
    Attribute(
        "RequestMemory",
        "integer or expression (MiB)",
        "memory the job asks a slot for; a slot with less will not run it",
        submit_command="request_memory",
    ),
    Attribute(
        "RequestCpus", "integer", "CPU cores the job asks for", submit_command="request_cpus"
    ),
    Attribute(
        "RequestDisk",
        "integer or expression (KiB)",
        "scratch disk the job asks for",
        submit_command="request_disk",
    ),
    Attribute("RequestGpus", "integer", "GPUs the job asks for", submit_command="request_gpus"),
    Attribute(
        "Requirements",
        "boolean expression",
        "what a slot must satisfy to run the job (the submit command is ANDed with defaults)",
        submit_command="requirements",
    ),
    Attribute(
        "Rank", "expression", "how the job orders the slots it could use", submit_command="rank"
    ),
    Attribute(
        "JobUniverse",
        "integer",
        "the execution environment (5 = vanilla)",
        submit_command="universe",
    ),
    Attribute(
        "JobPrio", "integer", "the owner's priority among their own jobs", submit_command="priority"
    ),
    Attribute("HoldReason", "string", "why the job is held"),
    Attribute("HoldReasonCode", "integer", "a code for why the job is held"),
    Attribute("ReleaseReason", "string", "why the job was last released"),
    Attribute("RemoveReason", "string", "why the job was removed"),
    Attribute("ExitCode", "integer", "the program's exit status when it exited normally"),
    Attribute("ExitBySignal", "boolean", "whether the program was killed by a signal"),
    Attribute("NumJobStarts", "integer", "how often the job has been started"),
    Attribute("QDate", "integer (epoch seconds)", "when the job was submitted"),
    Attribute("EnteredCurrentStatus", "integer (epoch seconds)", "when JobStatus last changed"),
    Attribute("CompletionDate", "integer (epoch seconds)", "when the job completed (0 if not)"),
    Attribute("RemoteHost", "string", "the slot a running job runs in"),
    Attribute(
        "TransferInput",
        "string (list)",
        "files sent with the job",
        submit_command="transfer_input_files",
    ),
    Attribute(
        "TransferOutput",
        "string (list)",
        "files brought back from the job",
        submit_command="transfer_output_files",
    ),
    Attribute(
        "Environment", "string", "the job's environment variables", submit_command="environment"
    ),
    Attribute(
        "JobBatchName", "string", "a label grouping jobs in listings", submit_command="batch_name"
    ),
    # machine (slot) attributes
    Attribute("Memory", "integer (MiB)", "memory this slot offers", ad="machine"),
    Attribute("Cpus", "integer", "CPU cores this slot offers", ad="machine"),
    Attribute("Disk", "integer (KiB)", "scratch disk this slot offers", ad="machine"),
    Attribute("State", "string", "the slot's state: Unclaimed, Claimed, Owner, ...", ad="machine"),
    Attribute("Activity", "string", "what the slot is doing: Idle, Busy, ...", ad="machine"),
    Attribute("OpSys", "string", "the operating system of the machine", ad="machine"),
    Attribute("Arch", "string", "the CPU architecture of the machine", ad="machine"),
    Attribute(
        "PartitionableSlot",
        "boolean",
        "whether the slot is carved into smaller slots for the jobs it runs",
        ad="machine",
    ),
    Attribute(
        "TotalSlotMemory", "integer (MiB)", "all the memory of a partitionable slot", ad="machine"
    ),
]

ATTRIBUTES: dict[str, Attribute] = {entry.name.lower(): entry for entry in _TABLE}
#: The same entries by the submit command that sets them.
BY_SUBMIT_COMMAND: dict[str, Attribute] = {
    entry.submit_command.lower(): entry for entry in _TABLE if entry.submit_command
}


def describe(name: str) -> Attribute | None:
    """The entry for ``name``: a job or machine attribute, a submit command (the attribute it
    sets), or a configuration knob (from cedar's knob table, generated from the release: its
    type and compiled-in default); names are case-insensitive.  None when cedar knows none."""
    key = name.strip().lower()
    found = ATTRIBUTES.get(key) or BY_SUBMIT_COMMAND.get(key)
    return found if found is not None else describe_knob(name.strip())


def describe_knob(name: str) -> Attribute | None:
    """A configuration knob as an entry (``ad`` = ``config``), or None when the table has no
    such knob."""
    from cedar.config.knob_table import knob_table

    known = knob_table().knobs.get(name.upper())
    if known is None:
        return None
    default, kind = known
    if default is None:
        said = "its default is detected on the machine when read"
    elif default == "":
        said = "no default compiled into the configuration table (the daemon's own applies)"
    else:
        said = f"compiled-in default: {default}"
    return Attribute(name.upper(), KNOB_KINDS[kind], f"a configuration knob; {said}", ad="config")


#: The knob table's types, in the words the attribute entries use.
KNOB_KINDS = {"str": "string", "int": "integer", "bool": "boolean", "float": "real"}


def attribute(name: str, ad: str) -> Attribute | None:
    """The entry of a ``job`` or ``machine`` attribute (case-insensitive), or None."""
    found = ATTRIBUTES.get(name.strip().lower())
    return found if found is not None and found.ad == ad else None


def search(text: str, limit: int) -> list[Attribute]:
    """Entries whose name, meaning or submit command contain every word of ``text``
    (case-insensitive): attributes and submit commands first, then knobs by name; at most
    ``limit``."""
    from cedar.config.knob_table import knob_table

    words = text.lower().split()
    found: list[Attribute] = []
    for entry in _TABLE:
        said = f"{entry.name} {entry.meaning} {entry.submit_command or ''}".lower()
        if all(word in said for word in words):
            found.append(entry)
            if len(found) >= limit:
                return found
    for knob in sorted(knob_table().knobs):
        if all(word in knob.lower() for word in words):
            knob_entry = describe_knob(knob)
            if knob_entry is not None:
                found.append(knob_entry)
                if len(found) >= limit:
                    break
    return found
