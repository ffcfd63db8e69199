"""Sinful strings: daemon addresses with parameters (spec 03 §8.1-§8.3).

``<host:port?addrs=...&alias=...&noUDP&sock=...>``.  Parsing accepts the shorthands the reference
accepts; formatting emits params sorted by key with the reference's escaping, so a parsed sinful
prints back the way HTCondor would print it.
"""

from __future__ import annotations

from cedar.errors import InvalidArgument
from cedar.record import Record

_SAFE = ".-_:#[]+"


def _escape(text: str) -> str:
    if all(ch.isalnum() and ch.isascii() or ch in _SAFE for ch in text):
        return text
    from urllib.parse import quote  # rare, and a start-up import

    return "".join(
        ch if ch.isalnum() and ch.isascii() or ch in _SAFE else quote(ch, safe="").lower()
        for ch in text
    )


def _unescape(text: str) -> str:
    if "%" not in text:
        return text
    from urllib.parse import unquote  # rare, and a start-up import

    return unquote(text)


class Sinful(Record):
    """A parsed sinful string; ``params`` keeps every parameter (``noUDP`` has value ``""``)."""

    __slots__ = ("host", "port", "params")

    def __init__(
        self, host: str, port: int | None = None, params: dict[str, str] | None = None
    ) -> None:
        self.host = host
        self.port = port
        self.params = {} if params is None else params

    @classmethod
    def parse(cls, text: str) -> Sinful:
        """Parse ``<...>`` or a ``host:port`` / ``[v6]:port`` / naked IPv6 shorthand."""
        original = text
        text = text.strip()
        if not text:
            raise InvalidArgument("empty address")
        if not text.startswith("<"):
            before_query = text.split("?", 1)[0]
            if not text.startswith("[") and before_query.count(":") >= 2:
                text = f"<[{before_query}]" + text[len(before_query) :] + ">"
            else:
                text = f"<{text}>"
        if not text.endswith(">") or text.count(">") != 1:
            raise InvalidArgument(f"malformed sinful string {original!r}: must end at '>'")
        body = text[1:-1]
        address, _sep, query = body.partition("?")
        if address.startswith("["):
            end = address.find("]")
            if end < 0:
                raise InvalidArgument(f"malformed sinful string {original!r}: unclosed '['")
            host = address[1:end]
            rest = address[end + 1 :]
            import ipaddress  # an IPv6 literal only (a start-up import)

            try:
                ipaddress.IPv6Address(host.split("%", 1)[0])
            except ValueError:
                raise InvalidArgument(
                    f"malformed sinful string {original!r}: bad IPv6 literal"
                ) from None
        else:
            host, colon, port_text = address.partition(":")
            rest = colon + port_text
        if not host:
            raise InvalidArgument(f"malformed sinful string {original!r}: no host")
        port: int | None = None
        if rest:
            if not rest.startswith(":"):
                raise InvalidArgument(f"malformed sinful string {original!r}: junk after host")
            port_text = rest[1:]
            if port_text:
                if not port_text.isdigit() or int(port_text) > 65535:
                    raise InvalidArgument(f"malformed sinful string {original!r}: bad port")
                port = int(port_text)
        params: dict[str, str] = {}
        for item in query.replace(";", "&").split("&"):
            if not item:
                continue
            key, _eq, value = item.partition("=")
            key = _unescape(key)
            if not key:
                raise InvalidArgument(f"malformed sinful string {original!r}: empty parameter name")
            params[key] = _unescape(value)
        return cls(host, port, params)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        text = f"<{host}" + (f":{self.port}" if self.port is not None else "")
        if self.params:
            items = []
            for key in sorted(self.params):
                value = self.params[key]
                items.append(_escape(key) + (f"={_escape(value)}" if value else ""))
            text += "?" + "&".join(items)
        return text + ">"

    @property
    def shared_port_id(self) -> str | None:
        """The ``sock`` parameter: the id to name in the shared-port preamble."""
        return self.params.get("sock") or None

    @property
    def ccb_contacts(self) -> list[str]:
        """The ``CCBID`` contacts (case-sensitive key, spec 03 §8.2)."""
        return self.params.get("CCBID", "").split()

    @property
    def alias(self) -> str | None:
        """The daemon's host name, if published."""
        return self.params.get("alias") or None

    def addrs(self) -> list[tuple[str, int]]:
        """The ``addrs`` list decoded: IPv4 ``a.b.c.d-port``, IPv6 ``[x-x-..]-port``."""
        result = []
        for item in self.params.get("addrs", "").split("+"):
            host, dash, port = item.rpartition("-")
            if not dash or not port.isdigit():
                continue
            if host.startswith("[") and host.endswith("]"):
                host = host[1:-1].replace("-", ":")
            result.append((host, int(port)))
        return result

    def connect_target(self, private_network: str | None = None) -> Sinful:
        """The sinful to connect to: the most desirable ``addrs`` entry, params kept (§8.3).

        With ``private_network`` equal to the daemon's ``PrivNet``, its ``PrivAddr`` is used
        (or, without one, the public address with ``CCBID`` removed).
        """
        if private_network and self.params.get("PrivNet") == private_network:
            private = self.params.get("PrivAddr")
            if private:
                return Sinful.parse(private if private.startswith("<") else f"<{private}>")
            params = {k: v for k, v in self.params.items() if k != "CCBID"}
            return Sinful(self.host, self.port, params).connect_target()
        candidates = self.addrs()
        if not candidates:
            return self
        host, port = candidates[0]
        if len(candidates) > 1:  # one address needs no ranking (and no ipaddress import)
            host, port = min(enumerate(candidates), key=lambda c: (_desirability(c[1][0]), c[0]))[1]
        return Sinful(host, port, dict(self.params))

    @property
    def endpoint(self) -> tuple[str, int]:
        """``(host, port)``; a sinful without a port cannot be connected to."""
        if self.port is None:
            raise InvalidArgument(f"address {self} has no port")
        return self.host, self.port


def _desirability(host: str) -> int:
    """Lower is better: public, private, link-local, loopback, IPv6 link-local."""
    import ipaddress  # only when a daemon offers several addresses

    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return 0
    if ip.version == 6 and ip.is_link_local:
        return 4
    if ip.is_loopback:
        return 3
    if ip.is_link_local:
        return 2
    if ip.is_private:
        return 1
    return 0


def parse_sinful(text: str) -> Sinful:
    """Shorthand for :meth:`Sinful.parse`."""
    return Sinful.parse(text)


def make_sinful(host: str, port: int, *, sock: str | None = None, alias: str | None = None) -> str:
    """The sinful a daemon listening on ``host:port`` publishes (``addrs``, ``noUDP``, ``sock``)."""
    ccb_host = f"[{host.replace(':', '-')}]" if ":" in host else host
    params = {"addrs": f"{ccb_host}-{port}", "noUDP": ""}
    if alias:
        params["alias"] = alias
    if sock:
        params["sock"] = sock
    return str(Sinful(host, port, params))
