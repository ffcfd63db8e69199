"""The submission's pre-encoded SetAttribute payloads are byte for byte the generic RPC's."""

from __future__ import annotations

import pytest

from cedar.commands import qmgmt
from cedar.numbers import QmgmtCall, SetAttributeFlags
from cedar.stream.connection import CedarConnection

PAIRS = [("ProcId", "7"), ("JobStatus", "5"), ("Args", '"a b"'), ("Cmd", '"/bin/x"')]


@pytest.mark.parametrize("encrypted", [False, True])
@pytest.mark.parametrize("flags", [0, SetAttributeFlags.NO_ACK])
@pytest.mark.parametrize("proc", [-1, 0, 12345])
def test_submission_payloads_equal_the_generic_encoding(
    encrypted: bool, flags: int, proc: int
) -> None:
    conn = CedarConnection()
    if encrypted:
        conn.install_aes_key(bytes(32), send_iv=bytes(16))
    requests = qmgmt._SubmitRequests(conn, 42, flags)
    call = QmgmtCall.SetAttribute2 if flags else QmgmtCall.SetAttribute
    expected = []
    for name, value in PAIRS:
        args: dict[str, str | int] = {"cluster": 42, "proc": proc, "value": value, "name": name}
        if flags:
            args["flags"] = int(flags)
        expected.append(qmgmt._request(conn, call, **args).getvalue())
    assert requests.set_attributes(proc, PAIRS) == expected
    assert requests.set_attributes(proc, PAIRS) == expected  # from the cached pieces
    assert requests.new_proc == qmgmt._request(conn, QmgmtCall.NewProc, cluster=42).getvalue()
