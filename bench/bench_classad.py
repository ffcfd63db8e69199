"""Micro-benchmark of the ClassAd wire codec: decode/encode of a large query result.

Run: ``python bench/bench_classad.py [ads] [attributes]``.  Prints ads/s and µs per attribute
for decoding (lazy), decoding plus reading every value, and encoding.
"""

from __future__ import annotations

import sys
import time

from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.stream.primitives import MessageReader, MessageWriter


def _sample_ad(index: int, attributes: int) -> ClassAd:
    ad = ClassAd()
    ad["MyType"] = "Machine"
    ad["Name"] = f"slot{index}@host{index % 97}.example.org"
    ad["Requirements"] = ClassAd.parse_old(
        "R = START && (TARGET.RequestMemory <= Memory) && MY.Cpus >= 1"
    ).lookup("R")
    for n in range(attributes - 3):
        kind = n % 4
        if kind == 0:
            ad[f"IntAttr{n}"] = n * index
        elif kind == 1:
            ad[f"RealAttr{n}"] = n / 7.0
        elif kind == 2:
            ad[f"StrAttr{n}"] = f"value-{n}-{index}"
        else:
            ad[f"BoolAttr{n}"] = bool(n & 8)
    return ad


def _timed(label: str, count: int, attributes: int, action: object) -> None:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    elapsed = time.perf_counter() - start
    print(
        f"{label:28s} {elapsed * 1000:8.1f} ms  {count / elapsed:9.0f} ads/s  "
        f"{elapsed / (count * attributes) * 1e6:6.2f} µs/attribute"
    )


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    attributes = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    ads = [_sample_ad(i, attributes) for i in range(count)]
    writer = MessageWriter()

    def encode() -> None:
        for ad in ads:
            put_classad(writer, ad)

    _timed("encode", count, attributes, encode)
    payload = writer.getvalue()
    print(f"payload {len(payload) / 1e6:.1f} MB")

    def decode() -> list[ClassAd]:
        reader = MessageReader(payload)
        return [get_classad(reader) for _ in range(count)]

    def decode_and_read() -> None:
        for ad in decode():
            for name in ad:
                ad[name]

    def reencode() -> None:
        out = MessageWriter()
        for ad in decode():
            put_classad(out, ad)

    _timed("decode (lazy)", count, attributes, decode)
    _timed("decode + read every value", count, attributes, decode_and_read)
    _timed("decode + re-encode", count, attributes, reencode)


if __name__ == "__main__":
    main()
