"""File transfer commands of one job (spec 06 §5.2, spec 07 for ``-spool``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from cedar.submit_language.encodings import (
    URL_SCHEME,
    join_path,
    requirement_references,
    size_kib,
)
from cedar.submit_language.errors import SubmitError

if TYPE_CHECKING:
    pass
from cedar.submit_language.parts import JobParts

#: What condor_submit 25.13.2 takes for ``should_transfer_files`` (any case; observed with
#: -dry-run): the words and the booleans' words, not 0/1/T/F or prefixes.
SHOULD_TRANSFER = {
    "YES": "YES",
    "TRUE": "YES",
    "ALWAYS": "YES",
    "NO": "NO",
    "FALSE": "NO",
    "NEVER": "NO",
    "IF_NEEDED": "IF_NEEDED",
}
#: The same for ``when_to_transfer_output``: true means at eviction too, false at exit.
WHEN_TO_TRANSFER = {
    "ON_EXIT": "ON_EXIT",
    "ON_EXIT_OR_EVICT": "ON_EXIT_OR_EVICT",
    "ON_SUCCESS": "ON_SUCCESS",
    "YES": "ON_EXIT_OR_EVICT",
    "TRUE": "ON_EXIT_OR_EVICT",
    "ALWAYS": "ON_EXIT_OR_EVICT",
    "NO": "ON_EXIT",
    "FALSE": "ON_EXIT",
    "NEVER": "ON_EXIT",
}
#: condor_submit's words for a value it does not know, per attribute.
_EXPECTED = {
    "ShouldTransferFiles": "YES, NO, or IF_NEEDED",
    "WhenToTransferOutput": "ON_EXIT, or ON_EXIT_OR_EVICT",
}


def _spelled(value: str, table: dict[str, str], attribute: str) -> str:
    """The value ``table`` gives a submit command's word, or condor_submit's error."""
    try:
        return table[value.strip().upper()]
    except KeyError:
        raise SubmitError(
            f"invalid value ({value.strip()}) for {attribute}. Please either specify "
            f"{_EXPECTED[attribute]} and try again."
        ) from None


class TransferParts(JobParts):
    """``should_transfer_files``, inputs/outputs, remaps, encryption lists, proxy, sizes."""

    def _transfer(self, universe: int, universe_name: str) -> None:
        self._encryption_lists()
        self._proxy()
        # The attribute-name spellings are commands too (observed on 25.13.2; batchspawner
        # writes ShouldTransferFiles): these two win over the command, the file lists do not.
        stf = self.get("ShouldTransferFiles", "should_transfer_files")
        wtto = self.get("WhenToTransferOutput", "when_to_transfer_output")
        explicit = stf is not None
        stf = _spelled(stf or "IF_NEEDED", SHOULD_TRANSFER, "ShouldTransferFiles")
        if wtto is not None:
            wtto = _spelled(wtto, WHEN_TO_TRANSFER, "WhenToTransferOutput")
        inputs = self.get("transfer_input_files", "TransferInputFiles")
        outputs = self.get("transfer_output_files", "TransferOutputFiles")
        if stf == "NO":
            if wtto is not None:
                raise SubmitError(
                    f"WhenToTransferOutput specified as {wtto} yet ShouldTransferFiles "
                    "defined as NO"
                )
            if inputs is not None or outputs is not None:
                raise SubmitError("transfer of files requested, but ShouldTransferFiles is NO")
        if wtto == "ON_EXIT_OR_EVICT" and stf == "IF_NEEDED":
            if explicit:
                raise SubmitError(
                    "ShouldTransferFiles IF_NEEDED cannot be combined with ON_EXIT_OR_EVICT"
                )
            stf = "YES"
        self.stf = stf
        self.set_str("ShouldTransferFiles", stf)
        if stf != "NO":
            self.set_str("WhenToTransferOutput", wtto or "ON_EXIT")
        if stf != "YES":
            self.set_str("FileSystemDomain", self.s.filesystem_domain)
        if universe in (5, 10, 11, 13) and (self.get("job_lease_duration") is None):
            if self.s.default_lease_duration:
                self.ad["JobLeaseDuration"] = self.s.default_lease_duration
        elif self.get("job_lease_duration") is not None:
            self.set_expr("JobLeaseDuration", self.get("job_lease_duration") or "")
        self.schemes: list[str] = []
        if inputs is not None:
            items = [p.strip() for p in inputs.split(",") if p.strip()]
            self.sized_items = list(items)  # DiskUsage counts a "dir/" as one tree
            if self.t.spool:
                items = self._spooled_inputs(items)
            self.input_items = items
            self.set_str("TransferInput", ",".join(items))
            for item in items:
                self._scheme(item)
        else:
            self.input_items = []
            self.sized_items = []
        if outputs is not None:
            self.set_str(
                "TransferOutput", ",".join(p.strip() for p in outputs.split(",") if p.strip())
            )
        remaps = self.get("transfer_output_remaps")
        if remaps is not None:
            remaps = remaps.strip('"')
            for part in remaps.split(";"):
                self._scheme(part.partition("=")[2].strip())
        every = [*self.stream_remaps, *([remaps] if remaps is not None else [])]
        if every:
            self.set_str("TransferOutputRemaps", ";".join(every))
        dest = self.get("output_destination")
        if dest is not None:
            self.set_str("OutputDestination", dest)
            self._scheme(dest)
        # Observed: not when the user's requirements name HasFileTransfer (which also drops
        # the plugin clauses from Requirements).
        user = self.get("requirements")
        if self.schemes and "hasfiletransfer" not in requirement_references(user or "true"):
            self.set_str("WantTransferPluginMethods", ",".join(self._sorted_schemes()))

    def _proxy(self) -> None:
        """``x509userproxy`` must name a readable file (the attributes condor_submit derives
        from the proxy itself are not produced: see the README's known gaps)."""
        proxy = self.get("x509userproxy")
        if proxy is None:
            return
        path = join_path(self.iwd, proxy)
        if not os.access(path, os.R_OK):
            raise SubmitError(f"unable to read proxy file {path}")
        self.set_str("x509userproxy", path)

    def _encryption_lists(self) -> None:
        """``encrypt_input_files`` and friends: string lists that ask for per-file encryption."""
        self.per_file_encryption = False
        for cmd, attr in (
            ("encrypt_input_files", "EncryptInputFiles"),
            ("encrypt_output_files", "EncryptOutputFiles"),
            ("dont_encrypt_input_files", "DontEncryptInputFiles"),
            ("dont_encrypt_output_files", "DontEncryptOutputFiles"),
        ):
            value = self.get(cmd)
            if value is not None:
                self.set_str(attr, value)
                self.per_file_encryption = True

    def _spooled_inputs(self, items: list[str]) -> list[str]:
        """-spool lists a ``dir/`` item (the directory's contents) entry by entry, sorted;
        one that does not exist is an error (observed)."""
        out: list[str] = []
        for item in items:
            if not item.endswith("/") or URL_SCHEME.match(item):
                out.append(item)
                continue
            try:
                names = sorted(os.listdir(join_path(self.iwd, item)))
            except OSError:
                raise SubmitError(
                    f"Failed to expand '{item}' in transfer input file list."
                ) from None
            out.extend(item + name for name in names)
        return out

    def _input_sizes(self) -> int:
        total = 0
        stdin = self.get("input", "stdin")
        if stdin and stdin != "/dev/null" and self.ad.get("TransferIn") != "false":
            total += size_kib(join_path(self.iwd, stdin))
        for item in self.sized_items:
            if URL_SCHEME.match(item):
                continue
            total += size_kib(join_path(self.iwd, item))
        return total
