"""Hostile images for the upload tests and bench/upload_bench.py (issue 33): small files that
claim, or really need, a great deal of work or memory to decode."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image

SOS, EOI = 0xDA, 0xD9


def _segments(data: bytes) -> list[tuple[int, int, int]]:
    """(marker, start, end) of each JPEG segment, a scan's entropy-coded data included."""
    found, at = [], 2
    while at < len(data):
        marker = data[at + 1]
        if marker == EOI:
            found.append((marker, at, at + 2))
            break
        length = struct.unpack(">H", data[at + 2 : at + 4])[0]
        end = at + 2 + length
        if marker == SOS:  # the scan's data runs to the next marker that is not RSTn or FF00
            while not (data[end] == 0xFF and data[end + 1] not in (0, *range(0xD0, 0xD8))):
                end += 1
        found.append((marker, at, end))
        at = end
    return found


def scan_bomb(scans: int = 2000, size: tuple[int, int] = (8660, 5773)) -> bytes:
    """A valid progressive greyscale JPEG of ``size`` (50 MP by default) followed by
    ``scans`` copies of its last (nearly empty) scan: a few hundred KB, each scan a pass over
    every block of the image."""
    out = io.BytesIO()
    Image.new("L", size, 128).save(out, "JPEG", progressive=True, quality=50)
    data = out.getvalue()
    last = [s for s in _segments(data) if s[0] == SOS][-1]
    scan = data[last[1] : last[2]]
    return data[: last[2]] + scan * scans + data[last[2] :]


def dimension_liar(
    size: tuple[int, int] = (7000, 7000), progressive: bool = True, mode: str = "RGB"
) -> bytes:
    """A few hundred bytes: a small JPEG's headers claiming ``size``, cut off just after its
    first scan begins (a decoder allocates for the size it reads, then finds no data)."""
    out = io.BytesIO()
    options = {"subsampling": 0} if mode == "RGB" else {}
    Image.new(mode, (16, 16), 90).save(out, "JPEG", progressive=progressive, **options)
    data = bytearray(out.getvalue())
    for marker, start, _end in _segments(bytes(data)):
        if marker in (0xC0, 0xC1, 0xC2):  # SOF: precision, height, width
            data[start + 5 : start + 9] = struct.pack(">HH", size[1], size[0])
        if marker == SOS:
            return bytes(data[: start + 40])
    raise AssertionError("no scan")


def png_bomb(side: int = 7071, mode: str = "RGBA") -> bytes:
    """A plain, valid PNG of one colour, ``side`` × ``side`` (just under 50 MP): a few
    hundred KB that decode to four bytes a pixel."""
    out = io.BytesIO()
    Image.new(mode, (side, side), (10, 20, 30, 255)[: len(mode)]).save(out, "PNG")
    return out.getvalue()


def png_liar(side: int = 7071) -> bytes:
    """A tiny PNG whose header (checksum and all) claims ``side`` × ``side`` RGBA pixels."""
    out = io.BytesIO()
    Image.new("RGBA", (16, 16), (1, 2, 3, 4)).save(out, "PNG")
    data = bytearray(out.getvalue())
    header = struct.pack(">II", side, side) + bytes(data[24:29])
    data[16:29] = header
    data[29:33] = struct.pack(">I", zlib.crc32(b"IHDR" + header))
    return bytes(data)


def multipart(boundary: str, parts: list[tuple[str, bytes]]) -> bytes:
    """A multipart body written by hand: each part's header lines as given, then its content."""
    body = b"".join(
        f"--{boundary}\r\n{headers}\r\n\r\n".encode() + content + b"\r\n"
        for headers, content in parts
    )
    return body + f"--{boundary}--\r\n".encode()
