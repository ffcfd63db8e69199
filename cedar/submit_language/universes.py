"""What the container, vm, grid, java and parallel universes add to a job (observed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cedar.submit_language.encodings import (
    URL_SCHEME,
    join_path,
    literal_value,
    parse_units,
    reprint,
    size_kib,
)
from cedar.submit_language.errors import SubmitError

if TYPE_CHECKING:
    pass
from cedar.submit_language.parts import JobParts


class UniverseParts(JobParts):
    """Container images and the vm/grid/java/parallel universe attributes."""

    def _container(self, image: str) -> None:
        """``container_image``: where the image comes from (``ContainerImageSource``: a URL's
        scheme, ``local`` for an absolute path or an image not transferred, ``cedar`` for one
        sent with the input sandbox, which then lists it, all observed)."""
        self.set_str("ContainerImage", image)
        transfer = self.boolean("transfer_container", True)
        if not transfer:
            self.ad["TransferContainer"] = "false"
        scheme = URL_SCHEME.match(image)
        if scheme:
            source = scheme.group(1).lower()
            self.image_kind = "docker" if source == "docker" else "sandbox"
        else:
            self.image_kind = "sif" if image.endswith(".sif") else "sandbox"
            source = "local" if image.startswith("/") else "cedar"
        if not transfer:
            source = "local"
        self.set_str("ContainerImageSource", source)
        self.ad[
            {"docker": "WantDockerImage", "sif": "WantSIF", "sandbox": "WantSandboxImage"}[
                self.image_kind
            ]
        ] = "true"
        if source == "cedar":
            self.set_str("ContainerImageFullPath", image)
            self.input_items.append(image)
            self.sized_items.append(image)
            self.set_str("TransferInput", ",".join(self.input_items))

    def _vm(self) -> int:
        """The vm universe (observed): the ``executable`` only names the VM, the image is as
        large as its memory, and the ``vm_*`` commands become ``JobVM*`` attributes."""
        ad = self.ad
        self.set_str("Cmd", self.get("executable") or "")
        ad["TransferExecutable"] = "false"
        vm_type = (self.get("vm_type") or "").lower()
        if not vm_type:
            raise SubmitError("'vm_type' cannot be found. Please specify vm_type.")
        self.set_str("JobVMType", vm_type)
        if vm_type == "xen" and self.get("xen_kernel") is None:
            raise SubmitError('xen_kernel must be one of "included", "vmx", <file-name>.')
        memory_text = self.get("vm_memory") or ""
        memory = parse_units(memory_text, "M")
        if memory is None:
            raise SubmitError(f"vm_memory = {memory_text} is not a size")
        ad["JobVMMemory"] = str(memory)
        ad["JobVM_VCPUS"] = reprint(self.get("vm_vcpus") or "1", "JobVM_VCPUS")
        checkpoint = self.boolean("vm_checkpoint", False)
        networking = self.boolean("vm_networking", False)
        wtto = (self.get("WhenToTransferOutput", "when_to_transfer_output") or "").upper()
        if checkpoint and networking and wtto != "ON_EXIT_OR_EVICT":
            raise SubmitError(
                "You explicitly requested both VM checkpoint and VM networking; you must "
                'also define "when_to_transfer_output = ON_EXIT_OR_EVICT"'
            )
        ad["JobVMCheckpoint"] = "true" if checkpoint else "false"
        ad["JobVMNetworking"] = "true" if networking else "false"
        ad["JobVMVNCConsole"] = "true" if self.boolean("vm_vnc", False) else "false"
        disk = self.get("vm_disk")
        if disk is not None:
            self.set_str("VMPARAM_vm_Disk", disk)
        return memory * 1024

    def _universe_details(self, universe: int, size: int) -> int:
        """What the grid, java and parallel universes add (observed); returns the KiB they add
        to ``DiskUsage`` (java counts the class file twice, then its jar files)."""
        ad = self.ad
        if universe == 9:
            resource = self.get("grid_resource")
            if resource is not None:
                self.set_str("GridResource", resource)
        elif universe == 11:
            count = self.get("machine_count")
            if count is not None:
                self.set_expr("MinHosts", count)
                self.set_expr("MaxHosts", count)
            ad["JobRequiresSandbox"] = "true"
            ad["WantIOProxy"] = "true"
        elif universe == 10:
            extra = size
            cmd = literal_value(ad.get("Cmd", '""'))
            self.set_str("Cmd", "java")
            ad["TransferExecutable"] = "false"
            jars = self.get("jar_files")
            jar_items = [j.strip() for j in (jars or "").split(",") if j.strip()]
            if jars is not None:
                self.set_str("JarFiles", jars)
            for jar in jar_items:
                extra += size_kib(join_path(self.iwd, jar))
            vm_args = self.get("java_vm_args")
            if vm_args is not None:
                self.set_str("JavaVMArgs", vm_args)
            if "TransferInput" in ad and isinstance(cmd, str):
                self.set_str("TransferInput", ",".join([*self.input_items, cmd, *jar_items]))
            return extra
        return 0
