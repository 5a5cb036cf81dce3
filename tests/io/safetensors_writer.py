#!/usr/bin/env python3
"""An independent .safetensors writer and reader for tests/io/safetensors.cpp (the format from
its specification: an 8-byte little-endian header length, a JSON header, the tensors' bytes),
with Python's standard library only.

  safetensors_writer.py write <path>   writes the tensors of `expected()`
  safetensors_writer.py check <path>   reads a file nax wrote and checks it holds `expected()`
"""
import json
import struct
import sys

FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q", "U8": "B", "BOOL": "?"}


def expected():
    """name -> (dtype, shape, values): the values of element i are a formula of i."""
    def values(dtype, n):
        if dtype in ("F32", "F64"):
            return [0.5 * i - 3.25 for i in range(n)]
        if dtype == "BOOL":
            return [i % 3 == 0 for i in range(n)]
        if dtype == "U8":
            return [(7 * i) % 256 for i in range(n)]
        return [(i * 37 - 100) * (1 if dtype == "I32" else 1_000_000_007) for i in range(n)]

    spec = [
        ("embed", "F32", [5, 4]),
        ("layers.0.w", "F64", [4, 3]),
        ("layers.1.w", "F64", [4, 3]),
        ("ids", "I32", [6]),
        ("big", "I64", [2, 2]),
        ("bytes", "U8", [3]),
        ("mask", "BOOL", [2, 3]),
        ("scalar", "F32", []),
        ("empty", "F32", [0, 4]),
    ]
    out = {}
    for name, dtype, shape in spec:
        n = 1
        for e in shape:
            n *= e
        out[name] = (dtype, shape, values(dtype, n))
    return out


def write(path):
    header, data = {"__metadata__": {"format": "pt", "writer": "python"}}, b""
    for name, (dtype, shape, vals) in expected().items():
        raw = struct.pack("<%d%s" % (len(vals), FORMATS[dtype]), *vals)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def check(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    meta = header.pop("__metadata__", {})
    if meta != {"writer": "nax"}:
        sys.exit("metadata %r" % meta)
    want = expected()
    if sorted(header) != sorted(want):
        sys.exit("names %r" % sorted(header))
    for name, (dtype, shape, vals) in want.items():
        e = header[name]
        if e["dtype"] != dtype or e["shape"] != shape:
            sys.exit("%s: %r" % (name, e))
        begin, end = e["data_offsets"]
        got = list(struct.unpack("<%d%s" % (len(vals), FORMATS[dtype]), data[begin:end]))
        if got != vals:
            sys.exit("%s: values %r" % (name, got[:8]))
    print("ok")


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
