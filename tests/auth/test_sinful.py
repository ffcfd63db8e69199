"""Sinful strings (spec 03 §8.1-§8.3)."""

from __future__ import annotations

import pytest

from cedar.auth.sinful import Sinful, make_sinful

REAL = (
    "<[2607:f388:107c:501:62eb:69ff:fe3e:bb05]:9555?CCBID=128.104.100.28:9555%3faddrs%3d"
    "[2607-f388-107c-501-7a2b-cbff-fe0a-ae0d]-9555+128.104.100.28-9555%26noUDP%26sock%3d"
    "collector#1&PrivNet=cm.batlab.org&addrs=[2607-f388-107c-501-62eb-69ff-fe3e-bb05]-9555"
    "&noUDP&sock=108706_2ab2_5>"
)


def test_reference_example_round_trips():
    sinful = Sinful.parse(REAL)
    assert sinful.host == "2607:f388:107c:501:62eb:69ff:fe3e:bb05" and sinful.port == 9555
    assert sinful.shared_port_id == "108706_2ab2_5"
    assert sinful.params["PrivNet"] == "cm.batlab.org" and sinful.params["noUDP"] == ""
    assert sinful.ccb_contacts == [
        "128.104.100.28:9555?addrs=[2607-f388-107c-501-7a2b-cbff-fe0a-ae0d]-9555"
        "+128.104.100.28-9555&noUDP&sock=collector#1"
    ]
    assert sinful.addrs() == [("2607:f388:107c:501:62eb:69ff:fe3e:bb05", 9555)]
    assert str(sinful) == REAL


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("127.0.0.1:9618", "127.0.0.1", 9618),
        ("<127.0.0.1:9618>", "127.0.0.1", 9618),
        ("[::1]:9618", "::1", 9618),
        ("::1", "::1", None),
        ("<host.example.org:1234?noUDP>", "host.example.org", 1234),
    ],
)
def test_shorthands(text, host, port):
    sinful = Sinful.parse(text)
    assert (sinful.host, sinful.port) == (host, port)


@pytest.mark.parametrize(
    "text", ["", "<127.0.0.1:9618", "<:9618>", "<[::1:9618>", "<1.2.3.4:port>", "<a:1?=x>"]
)
def test_malformed(text):
    with pytest.raises(ValueError):
        Sinful.parse(text)


def test_generation_sorts_and_escapes():
    sinful = Sinful("10.0.0.1", 9618, {"sock": "a b", "alias": "h", "noUDP": "", "CCBID": "x&y"})
    assert str(sinful) == "<10.0.0.1:9618?CCBID=x%26y&alias=h&noUDP&sock=a%20b>"
    assert Sinful.parse(str(sinful)).params == sinful.params


def test_connect_target_prefers_public_addresses():
    sinful = Sinful.parse("<127.0.0.1:1?addrs=127.0.0.1-1+10.1.2.3-2+[--1]-3+8.8.8.8-4&sock=s>")
    target = sinful.connect_target()
    assert (target.host, target.port) == ("8.8.8.8", 4)
    assert target.shared_port_id == "s"
    assert ("::1", 3) in sinful.addrs()


def test_make_sinful():
    assert make_sinful("127.0.0.1", 9618, sock="collector") == (
        "<127.0.0.1:9618?addrs=127.0.0.1-9618&noUDP&sock=collector>"
    )
    assert make_sinful("::1", 5) == "<[::1]:5?addrs=[--1]-5&noUDP>"


def test_private_network():
    sinful = Sinful.parse("<1.2.3.4:5?CCBID=9.9.9.9:1%231&PrivAddr=%3c10.0.0.5:7%3e&PrivNet=lab>")
    assert sinful.connect_target().ccb_contacts == ["9.9.9.9:1#1"]
    assert sinful.connect_target("lab").endpoint == ("10.0.0.5", 7)
    bare = Sinful.parse("<1.2.3.4:5?CCBID=9.9.9.9:1%231&PrivNet=lab>")
    assert (
        bare.connect_target("lab").ccb_contacts == [] and bare.connect_target("other").ccb_contacts
    )
