"""Requirements synthesis of one job (spec 06 §5.3, with the observed refinements)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cedar.submit_language.encodings import (
    literal_value,
    parse_units,
    reprint,
    requirement_references,
)

if TYPE_CHECKING:
    pass
from cedar.submit_language.parts import JobParts


class RequirementsParts(JobParts):
    """``Requirements`` and ``RequireGPUs``."""

    def _gpu_requirements(self) -> None:
        """``require_gpus`` and the ``gpus_minimum_*``/``gpus_maximum_*`` knobs (used only with
        ``request_gpus``) make ``RequireGPUs``: the user's clause, then one clause per knob
        unless the user's clause already names that GPU property (observed)."""
        clauses = []
        require = self.get("require_gpus")
        named: frozenset[str] = frozenset()
        if require is not None:
            clauses.append(require)
            named = requirement_references(require)
        capability = self.get("gpus_minimum_capability")
        if capability is not None:
            self.set_expr("GPUsMinCapability", capability)
            if "capability" not in named:
                clauses.append("Capability >= GPUsMinCapability")
        maximum = self.get("gpus_maximum_capability")
        if maximum is not None:
            self.set_expr("GPUsMaxCapability", maximum)
            if "capability" not in named:
                clauses.append("Capability <= GPUsMaxCapability")
        memory = self.get("gpus_minimum_memory")
        if memory is not None:
            units = parse_units(memory, "M")
            self.ad["GPUsMinMemory"] = (
                str(units) if units is not None else reprint(memory, "GPUsMinMemory")
            )
            if "globalmemorymb" not in named:
                clauses.append("GlobalMemoryMb >= GPUsMinMemory")
        runtime = self.get("gpus_minimum_runtime")
        if runtime is not None:
            major, _, minor = runtime.partition(".")
            try:
                self.ad["GPUsMinRuntime"] = str(int(major) * 1000 + int(minor or 0) * 10)
            except ValueError:
                self.set_expr("GPUsMinRuntime", runtime)
            if "maxsupportedversion" not in named:
                clauses.append("MaxSupportedVersion >= GPUsMinRuntime")
        if clauses:
            self.set_expr("RequireGPUs", " && ".join(clauses))

    def _requirements(self, universe: int, universe_name: str, container: bool) -> None:
        ad = self.ad
        user = self.get("requirements")
        if "my.requirements" in self.t.keys:
            return  # +Requirements: used verbatim, no synthesis
        clauses: list[str] = []
        if user is not None:
            clauses.append(f"({user})")
        grid = (self.get("grid_resource") or "").split()[:1]
        if universe == 9 and grid != ["condor"]:
            ad["Requirements"] = reprint(" && ".join(clauses) or "true", "Requirements")
            return
        refs = requirement_references(" && ".join(clauses)) if clauses else set()
        arch = f'(TARGET.Arch == "{self.s.arch}")'
        opsys_refs = {
            "opsys",
            "opsysandver",
            "opsyslongname",
            "opsysshortname",
            "opsysname",
            "opsyslegacy",
        }
        if universe == 13:
            clauses += [
                arch,
                "(TARGET.HasVM =?= true) && (TARGET.VM_Type == MY.JobVMType) && "
                "(TARGET.VM_AvailNum > 0) && (TARGET.Disk >= RequestDisk) && "
                "(TARGET.TotalMemory >= MY.JobVMMemory) && (TARGET.VM_Memory >= MY.JobVMMemory)",
            ]
            if "hasfiletransfer" not in refs:
                clauses.append("(TARGET.HasFileTransfer)")
            ad["Requirements"] = reprint(" && ".join(clauses), "Requirements")
            return
        if universe == 10:
            clauses.append("TARGET.HasJava")
        elif universe_name == "docker":
            network = (self.get("docker_network_type") or "").lower()
            extra = (
                " && StringListMember(My.DockerNetworkType,TARGET.DockerNetworks)"
                if network and network not in ("host", "none", "nat")
                else ""
            )
            clauses.append(f"{arch} && TARGET.HasDocker{extra}")
        elif container:
            kind = getattr(self, "image_kind", "docker")
            extra = {
                "docker": "TARGET.HasDockerURL",
                "sif": "TARGET.HasSIF",
                "sandbox": "TARGET.HasSandboxImage",
            }[kind]
            clauses.append(f"{arch} && TARGET.HasContainer && {extra}")
        else:
            if "arch" not in refs:
                clauses.append(arch)
            if not refs & opsys_refs:
                clauses.append(f'(TARGET.OpSys == "{self.s.opsys}")')
        vanilla_like = universe == 5
        disk = ad.get("RequestDisk")
        if disk is not None and self._positive(disk):
            if "disk" in refs:
                clauses.append("(TARGET.Disk >= RequestDisk)")
            elif vanilla_like:
                clauses.append(
                    '(versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || '
                    "(TARGET.Disk >= RequestDisk))"
                )
            else:
                clauses.append("(TARGET.Disk >= RequestDisk)")
        elif disk is None and "disk" not in refs:
            clauses.append("(TARGET.Disk >= DiskUsage)")
        memory = ad.get("RequestMemory")
        if memory is not None and self._positive(memory, 1):
            clauses.append("(TARGET.Memory >= RequestMemory)")
        cpus = ad.get("RequestCpus")
        if cpus is not None and "cpus" not in refs and self._positive(cpus, 1):
            clauses.append("(TARGET.Cpus >= RequestCpus)")
        for name in sorted(ad, key=str.lower):
            if not name.lower().startswith("request") or name.lower() in (
                "requestcpus",
                "requestmemory",
                "requestdisk",
            ):
                continue
            tag = name[len("Request") :]
            if len(tag) < 2 or tag.startswith("_") or tag.lower() in refs:
                continue
            value = literal_value(ad[name])
            if isinstance(value, str):
                if value:
                    clauses.append(f"regexp({name},TARGET.{tag})")
            elif (
                value is None
                or isinstance(value, bool)
                or (isinstance(value, (int, float)) and value > 0)
                or type(value).__name__ == "UndefinedType"
            ):
                require = next((a for a in ad if a.lower() == f"require{tag.lower()}"), None)
                if require:
                    clauses.append(f"(countMatches(MY.{require},TARGET.Available{tag}) >= {name})")
                else:
                    clauses.append(f"(TARGET.{tag} >= {name})")
        if ad.get("EncryptExecuteDirectory") == "true":
            clauses.append("TARGET.HasEncryptExecuteDirectory")
        if universe in (5, 8, 10, 11, 13):
            transfer = "TARGET.HasFileTransfer"
            if self.per_file_encryption:
                transfer += " && TARGET.HasPerFileEncryption"
            if (
                ad.get("PreserveRelativePaths") == "true"
                or "TransferCheckpoint" in ad
                or ad.get("WhenToTransferOutput") == '"ON_SUCCESS"'
            ):
                transfer += ' && versioncmp(split(TARGET.CondorVersion)[1],"8.9.7") >= 0'
            for scheme in self._sorted_schemes():
                transfer += f' && stringListIMember("{scheme}",TARGET.HasFileTransferPluginMethods)'
            # A clause the user's requirements already decide is left out (observed: with
            # IF_NEEDED, a user HasFileTransfer drops both halves, FileSystemDomain only its own).
            has_transfer = "hasfiletransfer" in refs
            shared = "filesystemdomain" not in refs and self.stf != "YES"
            moved = not has_transfer and self.stf != "NO"
            if self.stf not in ("YES", "NO") and has_transfer:
                pass
            elif shared and moved:
                clauses.append(
                    f"((TARGET.FileSystemDomain == MY.FileSystemDomain) || ({transfer}))"
                )
            elif shared:
                clauses.append("(TARGET.FileSystemDomain == MY.FileSystemDomain)")
            elif moved:
                clauses.append(f"({transfer})")
        if getattr(self, "deferred", False):
            clauses.append(
                "TARGET.HasJobDeferral && (((time() + ScheddInterval) >= "
                "(DeferralTime - DeferralPrepTime)) && (time() < (DeferralTime + DeferralWindow)))"
            )
        if "SuccessCheckpointExitCode" in ad:
            clauses.append("TARGET.HasSelfCheckpointTransfers")
        cuda = self.get("cuda_version")
        if cuda is not None:
            major, _, minor = cuda.partition(".")
            try:
                ad["CUDAVersion"] = str(int(major) * 1000 + int(minor or 0))
            except ValueError:
                self.set_expr("CUDAVersion", cuda)
            clauses.append("CUDAVersion <= TARGET.CUDAMaxSupportedVersion")
        ad["Requirements"] = reprint(" && ".join(clauses), "Requirements")

    @staticmethod
    def _positive(text: str, threshold: float = 0) -> bool:
        value = literal_value(text)
        if value is None:
            return True  # non-literal
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return value > threshold
