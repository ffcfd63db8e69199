"""The shared state and helpers of the job-ad builder (its parts are mixins over this)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from cedar.config.macros import Lookup, MacroExpander
from cedar.submit_language.encodings import (
    URL_SCHEME,
    bool_value,
    evaluate_text,
    quote,
    reprint,
)
from cedar.submit_language.errors import SubmitError
from cedar.submit_language.settings import SubmitSettings

#: Commands condor_submit also takes under the name of the job attribute they set (observed,
#: 25.13.2 -dry-run: ``JobBatchName = x`` is ``batch_name = x``; the command wins when both
#: are given, in either order).  htmap writes ``JobBatchName``.
ATTRIBUTE_NAMES: dict[str, str] = {
    "allowed_execute_duration": "AllowedExecuteDuration",
    "allowed_job_duration": "AllowedJobDuration",
    "batch_id": "JobBatchId",
    "batch_name": "JobBatchName",
    "coresize": "CoreSize",
    "cron_day_of_month": "CronDayOfMonth",
    "cron_day_of_week": "CronDayOfWeek",
    "cron_hour": "CronHour",
    "cron_minute": "CronMinute",
    "cron_month": "CronMonth",
    "dag_node_name": "DAGNodeName",
    "description": "JobDescription",
    "docker_network_type": "DockerNetworkType",
    "docker_pull_policy": "DockerPullPolicy",
    "dont_encrypt_input_files": "DontEncryptInputFiles",
    "dont_encrypt_output_files": "DontEncryptOutputFiles",
    "encrypt_execute_directory": "EncryptExecuteDirectory",
    "encrypt_input_files": "EncryptInputFiles",
    "encrypt_output_files": "EncryptOutputFiles",
    "hold_kill_sig": "HoldKillSig",
    "job_ad_information_attrs": "JobAdInformationAttrs",
    "job_machine_attrs": "JobMachineAttrs",
    "job_max_vacate_time": "JobMaxVacateTime",
    "jobset": "JobSetName",
    "keep_claim_idle": "KeepClaimIdle",
    "kill_sig": "KillSig",
    "kill_sig_timeout": "KillSigTimeout",
    "leave_in_queue": "LeaveJobInQueue",
    "load_profile": "LoadProfile",
    "max_job_retirement_time": "MaxJobRetirementTime",
    "max_transfer_input_mb": "MaxTransferInputMB",
    "max_transfer_output_mb": "MaxTransferOutputMB",
    "next_job_start_delay": "NextJobStartDelay",
    "nice_user": "NiceUser",
    "notify_user": "NotifyUser",
    "on_exit_hold_reason": "OnExitHoldReason",
    "on_exit_hold_subcode": "OnExitHoldSubCode",
    "periodic_hold": "PeriodicHold",
    "periodic_hold_reason": "PeriodicHoldReason",
    "periodic_hold_subcode": "PeriodicHoldSubCode",
    "periodic_release": "PeriodicRelease",
    "periodic_remove": "PeriodicRemove",
    "periodic_vacate": "PeriodicVacate",
    "preserve_relative_paths": "PreserveRelativePaths",
    "priority": "JobPrio",
    "remote_initialdir": "RemoteIwd",
    "remove_kill_sig": "RemoveKillSig",
    "request_cpus": "RequestCpus",
    "request_disk": "RequestDisk",
    "request_gpus": "RequestGPUs",
    "request_memory": "RequestMemory",
    "run_as_owner": "RunAsOwner",
    "stack_size": "StackSize",
    "submit_event_notes": "SubmitEventNotes",
    "transfer_checkpoint_files": "TransferCheckpoint",
    "transfer_input_files": "TransferInputFiles",
    "transfer_output_files": "TransferOutputFiles",
    "universe": "JobUniverse",
    "want_graceful_removal": "WantGracefulRemoval",
    "want_io_proxy": "WantIOProxy",
}


class SubmitMacros(MacroExpander):
    """The macro expander of the submit language: the configuration's, with ClassAd
    evaluation, :class:`SubmitError` and condor_submit's ``$CHOICE``."""

    def __init__(self, lookup: Lookup) -> None:
        super().__init__(lookup, evaluate_text, error=SubmitError)

    def _function(self, func: str, body: str, depth: int) -> str | None:
        args = [a.strip() for a in self._expand(body, depth + 1).split(",")]
        if func != "CHOICE" or len(args) < 2:
            return super()._function(func, body, depth)
        # Observed (condor_submit -dry-run; the configuration refuses these): the index is a
        # number cut to an integer, 0 when it is none or negative; one out of range gives an
        # empty value; a single list argument names a macro (undefined: an empty list).
        try:
            index = max(int(float(self._arg(args[0], depth))), 0)
        except (ValueError, OverflowError):
            index = 0
        items = args[1:]
        if len(items) == 1:
            value = self.lookup(items[0])
            items = [] if value is None else self._expand(value, depth + 1).split(",")
        return items[index].strip() if index < len(items) else ""


class TranslationState(Protocol):
    """What a job's parts read of the whole translation (:class:`.jobad.Translator` is one):
    a protocol here, so that the parts import nothing of the translator that imports them."""

    settings: SubmitSettings
    submit_file: str | None
    submit_dir: str
    spool: bool
    now: int
    method: int | None
    cluster_id: int
    #: Every command the description sets: lower-case name -> its spelling there.
    keys: dict[str, str]


class JobParts:
    """One job's translation state: its commands, its macro expander and the ad being built.

    The builder is split by subject (:mod:`.builder`, :mod:`.transfer`, :mod:`.universes`,
    :mod:`.requirements`); the attributes below are what those parts share.
    """

    iwd: str
    stf: str
    input_items: list[str]
    sized_items: list[str]
    schemes: list[str]
    stream_remaps: list[str]
    per_file_encryption: bool = False
    deferred: bool = False
    image_kind: str = "docker"

    def __init__(
        self, translator: TranslationState, commands: Mapping[str, str], expander: MacroExpander
    ) -> None:
        self.t = translator
        self.s = translator.settings
        self.commands = commands
        self.expander = expander
        self.ad: dict[str, str] = {}
        self._expanded: dict[str, str] = {}

    def get(self, *names: str) -> str | None:
        """Expanded value of the first given command; empty counts as absent.  A command not
        given may be given under its attribute's name (:data:`ATTRIBUTE_NAMES`)."""
        aliases = [ATTRIBUTE_NAMES[name] for name in names if name in ATTRIBUTE_NAMES]
        for name in (*names, *aliases):
            low = name.lower()
            raw = self.commands.get(low)
            if raw is None:
                continue
            value = self._expanded.get(low)
            if value is None:
                value = self._expanded[low] = self.expander.expand(raw).strip()
            if value:
                return value
        return None

    def has(self, name: str) -> bool:
        return name.lower() in self.commands

    def boolean(self, name: str, default: bool) -> bool:
        value = self.get(name)
        return default if value is None else bool_value(name, value)

    def set_expr(self, attr: str, text: str) -> None:
        self.ad[attr] = reprint(text, attr)

    def set_str(self, attr: str, value: str) -> None:
        self.ad[attr] = quote(value)

    def _scheme(self, item: str) -> None:
        m = URL_SCHEME.match(item)
        if m and m.group(1).lower() in ("s3", "gs"):
            for kind in ("access_key_id_file", "secret_access_key_file"):
                if all(self.get(f"{p}_{kind}") is None for p in ("s3", "aws", "gs")):
                    raise SubmitError(f"[s3|gs]:// URLs require [s3|aws|gs]_{kind} to be set.")
        if m and m.group(1).lower() not in [s.lower() for s in self.schemes]:
            self.schemes.append(m.group(1))

    def _sorted_schemes(self) -> list[str]:
        return sorted(self.schemes, key=str.lower)
