"""Translating the commands of one job into its ad (spec 06 §5.1-§5.3)."""

from __future__ import annotations

import fnmatch
import math
import os
import re
from typing import TYPE_CHECKING

from cedar.classad_wire import parse_expr
from cedar.classad_wire.operators import wrap32
from cedar.errors import CedarError
from cedar.submit_language.encodings import (
    ATTR_NAME,
    encode_arguments,
    encode_env_v2,
    evaluate_text,
    join_path,
    parse_environment,
    parse_units,
    quote,
    reprint,
    signal_name,
    size_kib,
    v2_quote,
    v2_tokens,
)
from cedar.submit_language.errors import SubmitError
from cedar.submit_language.queue import split_items

if TYPE_CHECKING:
    pass
from cedar.submit_language.requirements import RequirementsParts
from cedar.submit_language.transfer import TransferParts
from cedar.submit_language.universes import UniverseParts

HOLD_REASON = "submitted on hold at user's request"
SPOOL_HOLD_REASON = "Spooling input data files"
#: ``LeaveJobInQueue`` of a spooled job: kept for 10 days after completion until its output
#: sandbox has been fetched (``StageOutFinish``), as condor_submit -spool sets it.
SPOOL_LEAVE_IN_QUEUE = (
    "JobStatus == 4 && (time() - (CompletionDate ?: time())) < 864000 && "
    "(StageOutFinish ?: 0) < EnteredCurrentStatus"
)
UNIVERSES = {
    "standard": 1,
    "vanilla": 5,
    "docker": 5,
    "container": 5,
    "scheduler": 7,
    "mpi": 8,
    "grid": 9,
    "java": 10,
    "parallel": 11,
    "local": 12,
    "vm": 13,
}
NOTIFICATION = {"never": 0, "always": 1, "complete": 2, "error": 3, "start": 4}


class JobBuilder(RequirementsParts, TransferParts, UniverseParts):
    """Translates the commands of one job into its ad (spec 06 §5.1–§5.3)."""

    def build(self, proc: int) -> dict[str, str]:
        ad = self.ad
        ad["ClusterId"] = str(self.t.cluster_id)
        ad["ProcId"] = str(proc)
        universe_name, universe = self._universe()
        container = False
        docker_image = self.get("docker_image")
        container_image = self.get("container_image")
        if universe_name == "docker":
            ad["WantDocker"] = "true"
        if (
            universe_name == "container"
            or container_image
            or (docker_image and universe_name != "docker")
        ):
            container = True
            ad["WantContainer"] = "true"
            if not (container_image or docker_image):
                raise SubmitError("container jobs require a container_image or docker_image")
        if universe_name == "vm" and self.get("vm_memory") is None:
            raise SubmitError(
                "vm_memory cannot be found. Please specify vm_memory for vm universe in your "
                "submit description file."
            )
        ad["JobUniverse"] = str(universe)
        if universe != 5:
            ad["KillSig"] = quote("SIGTERM")
        self._iwd()
        if universe_name == "vm":
            size = self._vm()
        else:
            size = self._executable(universe_name, docker_image or container_image)
        self._arguments()
        self._environment()
        self._streams()
        self._log()
        self._requests(universe)
        self._misc()
        self._transfer(universe, universe_name)
        if container_image:
            self._container(container_image)
        elif docker_image and not self.boolean("transfer_container", True):
            ad["TransferContainer"] = "false"
        if universe_name == "vm":
            ad["ShouldTransferFiles"] = quote("YES")
            ad.pop("FileSystemDomain", None)
            self.stf = "YES"
            if self.get("request_memory", "RequestMemory") is None:
                ad["RequestMemory"] = "MY.JobVMMemory"
            disk = size
        else:
            disk = size + self._input_sizes() + self._universe_details(universe, size)
        if docker_image:
            self.set_str("DockerImage", docker_image)
            if universe_name != "docker":
                ad["WantDockerImage"] = "true"
        self._hold()
        self._policy()
        self._custom_attrs()
        ad["ExecutableSize"] = str(size)
        image = self.get("image_size")
        if image is not None:
            units = parse_units(image, "K")
            ad["ImageSize"] = str(units) if units is not None else reprint(image, "ImageSize")
        else:
            ad["ImageSize"] = str(size)
        ad["DiskUsage"] = str(disk)
        ad["TransferInputSizeMB"] = str(math.ceil(disk / 1024))
        self._requirements(universe, universe_name, container)
        return ad

    # --- pieces --------------------------------------------------------------------------

    def _universe(self) -> tuple[str, int]:
        value = self.get("universe", "JobUniverse") or self.s.default_universe
        low = value.lower()
        if low.isdigit():
            number = int(low)
            names = {v: k for k, v in UNIVERSES.items() if k not in ("docker", "container")}
            if number not in names:
                raise SubmitError(f"unknown universe {value}")
            low = names[number]
        if low == "standard":
            raise SubmitError("'Standard' is not a supported universe.")
        if low not in UNIVERSES:
            raise SubmitError(f"I don't know about the '{value}' universe.")
        return low, UNIVERSES[low]

    def _iwd(self) -> None:
        value = self.get("initialdir", "iwd", "initial_dir", "job_iwd")
        iwd = self.t.submit_dir if value is None else join_path(self.t.submit_dir, value)
        if value is not None and not os.path.isdir(iwd):
            raise SubmitError(f"No such directory: {iwd}")
        self.iwd = iwd
        self.set_str("Iwd", iwd)

    def _executable(self, universe_name: str, image: str | None) -> int:
        shell = self.get("shell")
        if shell is not None:
            self.set_str("Cmd", "/bin/sh")
            self.set_str("Arguments", "-c " + v2_quote(shell).replace("'", "'", -1))
            self.ad["TransferExecutable"] = "false"
            return size_kib("/bin/sh")
        value = self.get("executable")
        transfer = self.get("transfer_executable")
        no_transfer = transfer is not None and transfer[:1] in ("F", "f")
        if no_transfer:
            self.ad["TransferExecutable"] = "false"
        if value is None:
            if universe_name in ("docker", "container") or image:
                self.set_str("Cmd", "")
                self.ad["TransferExecutable"] = "false"
                return 0
            raise SubmitError("No 'executable' parameter was provided")
        if no_transfer:
            # Not transferred, yet still measured when it is there (observed).
            self.set_str("Cmd", value)
            return size_kib(join_path(self.iwd, value))
        path = join_path(self.t.submit_dir, value)
        if not os.path.exists(path):
            raise SubmitError(f"Can't access executable file {value}: No such file or directory")
        self.set_str("Cmd", path)
        return size_kib(path)

    def _arguments(self) -> None:
        v2 = self.get("arguments2")
        both = v2 is not None and self.get("arguments", "args") is not None
        if both and v2 is not None and not v2.startswith('"'):
            raise SubmitError(f"Expecting double-quoted input string (V2 format): {v2}")
        # read even when unneeded: condor_submit refuses a non-boolean value (25.13.2)
        allow_v1 = self.boolean("allow_arguments_v1", False)
        if both and not allow_v1:
            raise SubmitError(
                "If you wish to specify both 'arguments' and 'arguments2' for maximal "
                "compatibility with different versions of Condor, then you must also "
                "specify allow_arguments_v1=true."
            )
        if v2 is not None:
            self.set_str("Arguments", " ".join(v2_quote(a) for a in v2_tokens(v2)))
            return
        if self.has("shell"):
            return
        value = self.get("arguments", "args")
        if value is None:
            self.set_str("Arguments", "")
            return
        attr, text = encode_arguments(value)
        self.set_str(attr, text)

    def _environment(self) -> None:
        v2 = self.get("environment2")
        env_cmd = self.get("env")
        value = self.get("environment")
        both = v2 is not None and (value or env_cmd) is not None
        # read even when unneeded: condor_submit refuses a non-boolean value (25.13.2)
        allow_v1 = self.boolean("allow_environment_v1", False)
        if both and not allow_v1:
            raise SubmitError(
                "If you wish to specify both 'environment' and 'environment2' for maximal "
                "compatibility with different versions of Condor, then you must also "
                "specify allow_environment_v1=true."
            )
        chosen = value if value is not None else env_cmd
        entries: dict[str, str] = {}
        is_v2 = False
        if v2 is not None:
            entries, _ = parse_environment('"' + v2 + '"')
            is_v2 = True
        elif chosen is not None:
            entries, is_v2 = parse_environment(chosen)
        getenv = self.get("getenv")
        if getenv is not None and getenv.lower() != "false":
            inherited = self._getenv(getenv)
            for name, val in inherited.items():
                entries.setdefault(name, val)
        if env_cmd is not None and v2 is None and not parse_environment(env_cmd)[1]:
            self.set_str("Env", ";".join(f"{k}={entries[k]}" for k in sorted(entries)))
            self.set_str("EnvDelim", ";")
            return
        del is_v2
        self.set_str("Environment", encode_env_v2(entries))

    @staticmethod
    def _getenv(spec: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if "\n" not in v}
        if spec.lower() == "true":
            return env
        patterns = [p for p in re.split(r"[\s,;]+", spec) if p]
        include = [p for p in patterns if not p.startswith("!")]
        exclude = [p[1:] for p in patterns if p.startswith("!")]
        out = {}
        for name, value in env.items():
            low = name.lower()
            if any(fnmatch.fnmatchcase(low, p.lower()) for p in include) and not any(
                fnmatch.fnmatchcase(low, p.lower()) for p in exclude
            ):
                out[name] = value
        return out

    def _streams(self) -> None:
        self.stream_remaps: list[str] = []
        for cmd, alias, attr, suffix in (
            ("input", "stdin", "In", "In"),
            ("output", "stdout", "Out", "Out"),
            ("error", "stderr", "Err", "Err"),
        ):
            name = self.get(cmd, alias)
            transfer = self.boolean(f"transfer_{cmd}", True)
            stream = self.boolean(f"stream_{cmd}", False)
            if name is None or name == "/dev/null":
                self.set_str(attr, "/dev/null")
                self.ad[f"Transfer{suffix}"] = "false"
                continue
            if self.t.spool and transfer and attr != "In" and "/" in name:
                # -spool: the output comes back into the sandbox under a fixed name and is
                # remapped to the path asked for (observed).
                sandbox_name = "_condor_stdout" if attr == "Out" else "_condor_stderr"
                self.stream_remaps.append(f"{sandbox_name}={name}")
                name = sandbox_name
            self.set_str(attr, name)
            if transfer:
                self.ad[f"Stream{suffix}"] = "true" if stream else "false"
            else:
                self.ad[f"Transfer{suffix}"] = "false"

    def _log(self) -> None:
        log = self.get("log")
        if log is not None:
            self.set_str("UserLog", join_path(self.iwd, log))
        if self.get("log_xml") is not None:
            self.ad["UserLogUseXML"] = "true" if self.boolean("log_xml", False) else "false"
        dag_log = self.get("dagman_log")
        if dag_log is not None:
            self.set_str("DAGManNodesLog", join_path(self.iwd, dag_log))

    def _requests(self, universe: int) -> None:
        grid_type = (self.get("grid_resource") or "").split()[:1]
        if universe == 9 and grid_type != ["condor"]:
            return
        cpus = self.get("request_cpus", "RequestCpus") or self.s.default_request_cpus
        if cpus.lower() != "undefined":
            self.set_expr("RequestCpus", cpus)
        memory = self.get("request_memory", "RequestMemory") or self.s.default_request_memory
        first, retry = self._memory_and_retries(memory)
        if first.lower() != "undefined":
            units = parse_units(first, "M")
            self.ad["RequestMemory"] = (
                str(units) if units is not None else reprint(first, "RequestMemory")
            )
        if retry.strip():
            # Retry sizes after an eviction for memory: one is SET, several become a list
            # walked by an index (observed).
            sizes = [str(parse_units(r, "M") or r.strip()) for r in retry.split(",") if r.strip()]
            if len(sizes) == 1:
                action = f"SET RequestMemory {sizes[0]}"
            else:
                self.set_expr("RetryRequestMemory", "{" + ",".join(sizes) + "}")
                action = (
                    "EVALSET RequestMemory RetryRequestMemory[RetryRequestMemoryIndex?:0]\x1e"
                    "EVALSET RetryRequestMemoryIndex MIN({size(RetryRequestMemory)-1, "
                    "(RetryRequestMemoryIndex?:0)+1})"
                )
            self.set_str("TransformOnEvict", "RequestMemory")
            self.set_str(
                "TransformBody_RequestMemory",
                "REQUIREMENTS (VacateReasonCode==21 || VacateReasonCode == 34) && "
                f"VacateReasonSubCode == 102\x1e{action}",
            )
        disk = self.get("request_disk", "RequestDisk") or self.s.default_request_disk
        units = parse_units(disk, "K")
        if disk.lower() != "undefined":
            self.ad["RequestDisk"] = (
                str(units) if units is not None else reprint(disk, "RequestDisk")
            )
        gpus = self.get("request_gpus", "RequestGPUs")
        if gpus is not None:
            self.set_expr("RequestGPUs", gpus)
            self._gpu_requirements()
        for low, key in self.t.keys.items():
            if not low.startswith("request_") or low in (
                "request_cpus",
                "request_memory",
                "request_disk",
                "request_gpus",
            ):
                continue
            tag = key[len("request_") :]
            if len(tag) < 2 or tag.startswith("_"):
                continue
            value = self.get(key)
            if value is not None:
                self.set_expr("Request" + tag, value)

    def _misc(self) -> None:
        ad = self.ad
        rank = self.get("rank", "preferences")
        ad["Rank"] = reprint(rank, "Rank") if rank is not None else "0.0"
        prio = self.get("priority", "prio")
        if prio is not None:
            value = evaluate_text(prio)
            if isinstance(value, bool) or not isinstance(value, int):
                raise SubmitError(f"priority = {prio} is not an integer")
            ad["JobPrio"] = str(value)
        else:
            ad["JobPrio"] = "0"
        notification = self.get("notification")
        if notification is not None:
            if notification.lower() not in NOTIFICATION:
                raise SubmitError(
                    "Notification must be 'Never', 'Always', 'Complete', 'Start', or 'Error'"
                )
            ad["JobNotification"] = str(NOTIFICATION[notification.lower()])
        else:
            ad["JobNotification"] = "0"
        for cmd, attr in (
            ("notify_user", "NotifyUser"),
            ("description", "JobDescription"),
            ("remote_initialdir", "RemoteIwd"),
            ("job_machine_attrs", "JobMachineAttrs"),
            ("job_ad_information_attrs", "JobAdInformationAttrs"),
            ("transfer_checkpoint_files", "TransferCheckpoint"),
            ("submit_event_notes", "SubmitEventNotes"),
            ("dag_node_name", "DAGNodeName"),
            ("docker_network_type", "DockerNetworkType"),
            ("docker_pull_policy", "DockerPullPolicy"),
        ):
            value = self.get(cmd)
            if value is not None:
                self.set_str(attr, value)
        for cmd, attr in (
            ("batch_name", "JobBatchName"),
            ("batch_id", "JobBatchId"),
            ("jobset", "JobSetName"),
        ):
            value = self.get(cmd)
            if value is not None:
                self.set_str(attr, value.strip('"'))
        emails = self.get("email_attributes")
        if emails is not None:
            self.set_str("EmailAttributes", ",".join(split_items(emails)))
        limits = self.get("concurrency_limits")
        if limits is not None:
            items = sorted(p.strip().lower() for p in limits.split(",") if p.strip())
            self.set_str("ConcurrencyLimits", ",".join(items))
        else:
            limits_expr = self.get("concurrency_limits_expr")
            if limits_expr is not None:
                self.set_expr("ConcurrencyLimits", limits_expr)
        history = self.get("job_machine_attrs_history_length")
        if history is not None:
            self.set_expr("JobMachineAttrsHistoryLength", history)
        self._deferral()
        checkpoint = self.get("checkpoint_exit_code")
        if checkpoint is not None:
            self.set_expr("SuccessCheckpointExitCode", checkpoint)
            self.ad["WantFTOnCheckpoint"] = "true"
        for cmd, attr in (
            ("job_max_vacate_time", "JobMaxVacateTime"),
            ("max_job_retirement_time", "MaxJobRetirementTime"),
            ("want_graceful_removal", "WantGracefulRemoval"),
            ("allowed_job_duration", "AllowedJobDuration"),
            ("allowed_execute_duration", "AllowedExecuteDuration"),
            ("keep_claim_idle", "KeepClaimIdle"),
            ("next_job_start_delay", "NextJobStartDelay"),
            ("max_transfer_input_mb", "MaxTransferInputMB"),
            ("max_transfer_output_mb", "MaxTransferOutputMB"),
            ("stack_size", "StackSize"),
            ("leave_in_queue", "LeaveJobInQueue"),
            ("periodic_hold", "PeriodicHold"),
            ("periodic_hold_reason", "PeriodicHoldReason"),
            ("periodic_hold_subcode", "PeriodicHoldSubCode"),
            ("periodic_release", "PeriodicRelease"),
            ("periodic_remove", "PeriodicRemove"),
            ("periodic_vacate", "PeriodicVacate"),
            ("on_exit_hold_reason", "OnExitHoldReason"),
            ("on_exit_hold_subcode", "OnExitHoldSubCode"),
            ("max_idle", "JobMaterializeMaxIdle"),
            ("materialize_max_idle", "JobMaterializeMaxIdle"),
        ):
            value = self.get(cmd)
            if value is not None:
                self.set_expr(attr, value)
        for cmd, attr in (
            ("run_as_owner", "RunAsOwner"),
            ("load_profile", "LoadProfile"),
            ("want_io_proxy", "WantIOProxy"),
            ("preserve_relative_paths", "PreserveRelativePaths"),
            ("encrypt_execute_directory", "EncryptExecuteDirectory"),
        ):
            if self.get(cmd) is not None:
                self.ad[attr] = "true" if self.boolean(cmd, False) else "false"
        value = self.get("coresize")
        if value is not None:
            # Observed: any number, a real cut to its integer part, a boolean as 0/1.
            number = evaluate_text(value)
            if isinstance(number, float) and math.isfinite(number):
                number = int(number)
            if not isinstance(number, int):
                raise SubmitError(f"coresize = {value} does not evaluate to an integer")
            self.ad["CoreSize"] = str(int(number))
        value = self.get("kill_sig_timeout")
        if value is not None:
            # Observed: C atoi of the text, as a C int (xyz is 0, 5x is 5, 1+1 is 1).
            digits = re.match(r"\s*([-+]?\d+)", value)
            self.ad["KillSigTimeout"] = str(wrap32(int(digits.group(1))) if digits else 0)
        for cmd, attr in (
            ("kill_sig", "KillSig"),
            ("remove_kill_sig", "RemoveKillSig"),
            ("hold_kill_sig", "HoldKillSig"),
        ):
            value = self.get(cmd)
            if value is not None:
                self.set_str(attr, signal_name(value))
        self._accounting()
        ad.setdefault("LeaveJobInQueue", "false")
        for attr, value in (
            ("MyType", quote("Job")),
            ("TargetType", quote("Machine")),
            ("Owner", "undefined"),
            ("QDate", str(self.t.now)),
            ("EnteredCurrentStatus", str(self.t.now)),
            ("MinHosts", "1"),
            ("MaxHosts", "1"),
            ("CurrentHosts", "0"),
            ("ExitBySignal", "false"),
            ("CondorVersion", quote(self.s.condor_version)),
            ("SubmitVersion", quote(self.s.condor_version)),
            ("CondorPlatform", quote(self.s.condor_platform)),
        ):
            ad[attr] = value
        for attr in (
            "NumCkpts",
            "NumJobStarts",
            "NumJobCompletions",
            "NumRestarts",
            "NumSystemHolds",
            "ExitStatus",
            "CommittedTime",
            "CommittedSlotTime",
            "CumulativeSlotTime",
            "TotalSuspensions",
            "LastSuspensionTime",
            "CumulativeSuspensionTime",
            "CommittedSuspensionTime",
        ):
            ad[attr] = "0"
        for attr in (
            "RemoteWallClockTime",
            "RemoteUserCpu",
            "RemoteSysCpu",
            "CumulativeRemoteUserCpu",
            "CumulativeRemoteSysCpu",
        ):
            ad[attr] = "0.0"
        if self.t.method is not None:
            ad["JobSubmitMethod"] = str(int(self.t.method))
        if self.t.submit_file:
            self.set_str("JobSubmitFile", self.t.submit_file)

    def _accounting(self) -> None:
        group = self.get("accounting_group")
        user = self.get("accounting_group_user")
        nice = self.get("nice_user") is not None and self.boolean("nice_user", False)
        if nice:
            self.ad["MaxJobRetirementTime"] = "0"
            if group is None:
                group = "nice-user"
        if group is None and user is None:
            return
        if user is None:
            user = self.s.user
        if group is not None:
            self.set_str("AcctGroup", group)
        self.set_str("AcctGroupUser", user)
        self.set_str("AccountingGroup", f"{group}.{user}" if group is not None else user)

    def _hold(self) -> None:
        held = self.get("hold") is not None and self.boolean("hold", False)
        if self.t.spool and held:
            raise SubmitError("Cannot set hold to 'true' when using -remote or -spool")
        if self.t.spool:
            # condor_submit -spool: the job waits on the spooling hold until its input sandbox
            # arrives, and stays in the queue until its output is fetched (spec 07).
            self.ad["JobStatus"] = "5"
            self.set_str("HoldReason", SPOOL_HOLD_REASON)
            self.ad["HoldReasonCode"] = "16"
            if self.get("leave_in_queue") is None:
                self.ad["LeaveJobInQueue"] = reprint(SPOOL_LEAVE_IN_QUEUE, "LeaveJobInQueue")
        elif held:
            self.ad["JobStatus"] = "5"
            self.set_str("HoldReason", HOLD_REASON)
            self.ad["HoldReasonCode"] = "15"
        else:
            self.ad["JobStatus"] = "1"

    def _policy(self) -> None:
        retries = self.get("max_retries")
        success = self.get("success_exit_code")
        until = self.get("retry_until")
        on_exit_remove = self.get("on_exit_remove")
        on_exit_hold = self.get("on_exit_hold")
        if retries is None and success is None and until is None:
            if on_exit_remove is not None:
                self.set_expr("OnExitRemove", on_exit_remove)
            if on_exit_hold is not None:
                self.set_expr("OnExitHold", on_exit_hold)
            return
        self.set_expr("JobMaxRetries", retries or self.s.default_job_max_retries)
        self.set_expr("OnExitHold", on_exit_hold or "false")
        code = "0"
        if success is not None:
            self.set_expr("JobSuccessExitCode", success)
            code = "JobSuccessExitCode"
        text = f"NumJobCompletions > JobMaxRetries || ExitCode =?= {code}"
        if until is not None:
            text += f" || ExitCode =?= {until}" if until.strip().isdigit() else f" || {until}"
        if on_exit_remove is not None:
            text += f" || {on_exit_remove}"
        self.set_expr("OnExitRemove", text)

    def _custom_attrs(self) -> None:
        for low, key in self.t.keys.items():
            if not low.startswith("my."):
                continue
            name = key[3:]
            if not ATTR_NAME.match(name):
                raise SubmitError(f"invalid attribute name {name}")
            raw = self.commands.get(low)
            if raw is None:
                continue
            value = self.expander.expand(raw).strip()
            self.ad[name] = reprint(value, name) if value else "undefined"

    # --- Requirements (spec 06 §5.3) -----------------------------------------------------

    @staticmethod
    def _memory_and_retries(value: str) -> tuple[str, str]:
        """``request_memory``: one expression (commas inside it are its own), or a list of
        sizes whose first is the request and the rest the retry sizes after an eviction for
        memory (spec 06 §5.5; a list item that is not a size is a parse error, observed)."""
        if "," not in value or parse_units(value, "M") is not None:
            return value, ""
        try:
            parse_expr(value)
        except CedarError:
            pass
        else:
            return value, ""
        first, _, retry = value.partition(",")
        if parse_units(first, "M") is None:
            raise SubmitError(f"Parse error in expression: RequestMemory = {value}")
        return first, retry

    def _deferral(self) -> None:
        """``deferral_time``/``cron_*``: the deferral attributes (their Requirements clause is
        added by :meth:`_requirements`)."""
        crons = [
            (cmd, attr)
            for cmd, attr in (
                ("cron_minute", "CronMinute"),
                ("cron_hour", "CronHour"),
                ("cron_day_of_month", "CronDayOfMonth"),
                ("cron_month", "CronMonth"),
                ("cron_day_of_week", "CronDayOfWeek"),
            )
            if self.get(cmd) is not None
        ]
        when = self.get("deferral_time")
        if when is None and not crons:
            self.deferred = False
            return
        self.deferred = True
        if when is not None:
            self.set_expr("DeferralTime", when)
        for cmd, attr in crons:
            self.set_str(attr, self.get(cmd) or "")
        window = self.get("deferral_window", "cron_window")
        self.set_expr("DeferralWindow", window if window is not None else "0")
        prep = self.get("deferral_prep_time", "cron_prep_time")
        self.set_expr("DeferralPrepTime", prep if prep is not None else "300")
        self.ad["ScheddInterval"] = self.s.schedd_interval
