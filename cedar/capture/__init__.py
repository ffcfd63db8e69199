"""Reading recorded CEDAR traffic: pcap/pcapng files, TCP reassembly, message splitting and a
stateful dissector that explains every message (``cedar decode`` is its command line).

Typical use::

    from cedar.capture import dissect
    for conv in dissect("trace.pcap", keys=[session_key]):
        print(conv.number, conv.command_name, [m.summary for m in conv.messages])
"""

from cedar.capture.dissect import (
    DecodedMessage,
    DissectedConversation,
    check,
    command_name,
    dissect,
    dissect_conversation,
)
from cedar.capture.errors import CaptureError
from cedar.capture.messages import Conversation, WireMessage, load_conversations
from cedar.capture.pcap import TcpSegment, UdpDatagram, read_segments
from cedar.capture.tcp import C2S, S2C, reassemble

__all__ = [
    "C2S",
    "S2C",
    "CaptureError",
    "Conversation",
    "DecodedMessage",
    "DissectedConversation",
    "TcpSegment",
    "UdpDatagram",
    "WireMessage",
    "check",
    "command_name",
    "dissect",
    "dissect_conversation",
    "load_conversations",
    "read_segments",
    "reassemble",
]
