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


# --- issue 45: what the header walks missed, and what cost time before any limit --------


def _small_jpeg(size: tuple[int, int] = (64, 64), progressive: bool = False) -> bytes:
    out = io.BytesIO()
    Image.new("L", size, 128).save(out, "JPEG", progressive=progressive, quality=50)
    return out.getvalue()


def hidden_scans(scans: int = 100, size: tuple[int, int] = (64, 64)) -> bytes:
    """A progressive greyscale JPEG with ``scans`` more scans after its first, hidden from
    a walker that takes ``FF 00`` for a marker with a length: an empty comment, then
    ``FF 00`` and two bytes that such a walker reads as the length of everything after
    (libjpeg skips all four), then the scans' headers, 10 bytes each. Each is a DC
    refinement scan with no data: a pass over every block, no table needed. The issue's:
    ``hidden_scans(6500, (8160, 6120))``, 196 KB."""
    data = _small_jpeg(size, progressive=True)
    first = next(s for s in _segments(data) if s[0] == SOS)
    hidden = b"\xff\xda\x00\x08\x01\x01\x00\x00\x00\x10" * scans
    assert len(hidden) + 2 < 0x10000 and 0xFF not in struct.pack(">H", len(hidden) + 2)
    cover = b"\xff\xfe\x00\x02" + b"\xff\x00" + struct.pack(">H", len(hidden) + 2)
    return data[: first[2]] + cover + hidden + data[first[2] :]


def fill_bytes(count: int = 100_000) -> bytes:
    """A 64 × 64 JPEG with ``count`` fill bytes (``FF``) after its SOI: libjpeg and Pillow
    skip them one at a time. The issue's: ``fill_bytes(15_727_884)``, 15 MB."""
    return b"\xff\xd8" + b"\xff" * count + _small_jpeg()[2:]


def gif_comments(blocks: int = 5000) -> bytes:
    """A 16 × 16 GIF whose comment is ``blocks`` one-byte sub-blocks (Pillow joins them one
    by one). The issue's: ``gif_comments(7_800_000)``, 15 MB."""
    out = io.BytesIO()
    Image.new("P", (16, 16), 1).save(out, "GIF")
    data = out.getvalue()
    flags = data[10]
    after_screen = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    comment = b"\x21\xfe" + b"\x01x" * blocks + b"\x00"
    return data[:after_screen] + comment + data[after_screen:]


def _png_chunk(kind: bytes, content: bytes) -> bytes:
    crc = zlib.crc32(kind + content)
    return struct.pack(">I", len(content)) + kind + content + struct.pack(">I", crc)


def png_chunks(chunks: int = 300, size: int = 0) -> bytes:
    """A 16 × 16 PNG with ``chunks`` private chunks of ``size`` bytes each before its pixels
    (Pillow reads them one by one). The issue's: ``png_chunks(1_300_000)``, 15 MB."""
    out = io.BytesIO()
    Image.new("RGB", (16, 16), (1, 2, 3)).save(out, "PNG")
    data = out.getvalue()
    after_header = 8 + 25  # the signature, then IHDR (13 bytes, with length, type and CRC)
    return data[:after_header] + _png_chunk(b"prVt", b"\x00" * size) * chunks + data[after_header:]
