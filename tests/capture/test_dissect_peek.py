"""The dissector on the condor_tail / ssh-to-job recordings: the claim id seen in clear gives
the key of the starter conversations, which then decode without --key (spec 08 §8)."""

from __future__ import annotations

import json

import pytest

from cedar.capture import dissect
from cedar.numbers import Command
from tests.support import CAPTURES

TAIL = CAPTURES / "tail"
CLAIM_KEY_TEXT = "dfa67a888b05d149e8b5b549fd0b7692a61cf695e1e2b6b0151e4b3e60253c56"


@pytest.mark.parametrize(
    "name",
    ["tail-stdout-raw", "tail-stderr-file-raw", "tail-badfile-raw", "tail-follow-raw",
     "tail-held-raw", "tail-refused-raw", "ssh-to-job-raw"],
)  # fmt: skip
def test_every_message_decodes(name: str) -> None:
    convs = dissect(str(TAIL / f"{name}.pcap"), strict=True)
    for conv in convs:
        for message in conv.messages:
            assert not message.encrypted or message.decrypted, (conv.number, message.summary)


def test_peek_is_decrypted_with_the_learned_claim_key() -> None:
    convs = dissect(str(TAIL / "tail-stdout-raw.pcap"), strict=True)
    peek = next(c for c in convs if c.command == Command.STARTER_PEEK)
    kinds = [m.kind for m in peek.messages]
    assert kinds[-4:] == ["PEEK_REPLY", "FILE_HEADER", "FILE_DATA", "FILE_COUNT"]
    assert [m.summary for m in peek.messages[-3:]] == [
        "stdout: 30 bytes; (chunks of 262144)",
        "30 bytes of stdout",
        "1 files sent (of 1)",
    ]
    assert peek.messages[-2].payload == b"dout line 251\nstdout line 252\n"


def test_the_claim_id_is_not_shown() -> None:
    convs = dissect(str(TAIL / "tail-stdout-raw.pcap"), strict=True)
    text = json.dumps([c.to_json(verbose=True) for c in convs], default=str)
    assert CLAIM_KEY_TEXT not in text
    assert "<claim id, 269 characters>" in text
    assert all(repr(k) not in text for c in convs for k in c.learned_keys)


def test_the_shared_empty_file_marker_of_a_used_up_budget() -> None:
    convs = dissect(str(TAIL / "tail-stderr-file-raw.pcap"), strict=True)
    peek = next(c for c in convs if c.command == Command.STARTER_PEEK)
    assert [m.summary for m in peek.messages[-2:]] == [
        "progress.txt: 0 bytes; (chunks of 262144)",
        "666 (empty file); 2 files sent (of 2)",
    ]
