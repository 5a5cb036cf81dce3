#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets into tests/fuzz/corpus/<target>/seed-*.

The io target's seeds are real files: .npy files of every dtype nax reads (format versions 1.0,
2.0 and 3.0, scalars, empty and multi-dimensional shapes, padding as NumPy writes it) and .npz
archives as np.savez writes them (stored entries; one with ZIP64 extra fields, as np.savez writes
for large entries). The other targets decode bytes into choices, so any bytes are valid inputs:
their seeds are fixed pseudo-random byte strings of a few lengths. Run it again to regenerate
them (the output does not change). Beside them: inputs that found bugs (regression-*), and a few
inputs fuzzing found worth keeping as seeds (seed-<what>, not written here).
"""
import io
import os
import random
import struct
import zipfile

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def npy(descr, shape, data, version=1):
    shape_text = "(" + "".join(f"{n}, " if len(shape) > 1 else f"{n}," for n in shape)
    shape_text = shape_text.rstrip(", ") + ("," if len(shape) == 1 else "") + ")"
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}"
    length_bytes = 2 if version == 1 else 4
    pad = (64 - (8 + length_bytes + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    out = b"\x93NUMPY" + bytes([version, 0])
    out += struct.pack("<H" if version == 1 else "<I", len(header))
    return out + header.encode("latin1") + data


def npz(entries, zip64=False):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            with z.open(info, "w", force_zip64=zip64) as f:
                f.write(data)
    return buffer.getvalue()


def write(target, name, data):
    folder = os.path.join(HERE, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


def main():
    f4 = npy("<f4", (2, 3), struct.pack("<6f", 0, 1, -2, 3.5, float("inf"), float("nan")))
    f8 = npy("<f8", (3,), struct.pack("<3d", 1, 2, 3), version=2)
    i4 = npy("<i4", (2, 1, 2), struct.pack("<4i", -1, 0, 1, 2147483647), version=3)
    i8 = npy("<i8", (), struct.pack("<q", -5))
    u1 = npy("|u1", (4,), bytes([0, 1, 128, 255]))
    b1 = npy("|b1", (2, 2), bytes([0, 1, 2, 0]))
    empty = npy("<f4", (0, 5), b"")
    big_endian = npy(">f4", (1,), b"\0\0\x80\x3f")
    for name, data in [("f4.npy", f4), ("f8_v2.npy", f8), ("i4_v3.npy", i4), ("i8_scalar.npy", i8),
                       ("u1.npy", u1), ("b1.npy", b1), ("empty.npy", empty),
                       ("big_endian.npy", big_endian)]:
        write("io", name, data)
    write("io", "two.npz", npz([("w", f4), ("b", f8)]))
    write("io", "zip64.npz", npz([("x", i4)], zip64=True))
    write("io", "mixed.npz", npz([("u", u1), ("flags", b1), ("none", empty)]))

    rng = random.Random(21)
    for target in ["shapes", "builder", "run", "csr"]:
        for length in [8, 32, 96, 256, 600]:
            write(target, f"{length}", bytes(rng.randrange(256) for _ in range(length)))


if __name__ == "__main__":
    main()
