"""What an uploaded image claims, read from its headers by bounded walks, before the image
library opens it (issues 33 and 45).

The image library reads a file's headers in Python, byte by byte where a format allows
padding (a JPEG's fill bytes) and piece by piece where it allows any number of pieces (a
GIF's comment sub-blocks, a PNG's private chunks): fifteen megabytes of them cost seconds
and, for a GIF's comment, hundreds of megabytes. So each format is walked here first, the
way its decoder walks it (libjpeg skips a stuffed ``FF 00`` and any run of ``FF`` between
markers, and restart markers have no length), counting what it holds; a file with more
pieces than any camera or editor writes, or far more bytes than its pixels need, is refused
before anything else reads it. Each walk costs a few steps per piece (a C search between
them), and stops at its bound."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

from app.errors import DomainError

MAX_BYTES = 15 * 1024 * 1024
# Besides its pixels a photo carries EXIF, a preview, an ICC profile: a few hundred KB.
FLOOR_BYTES = 2 * 1024 * 1024
# The most an image's pixels take stored: 16-bit RGBA noise in a PNG (8 bytes a pixel).
BYTES_PER_PIXEL = 8
# A JPEG's segments before its first image ends: tables, a few APPn, ~10 scans for a
# progressive photo (each with its tables); a thousand is far beyond any camera's.
MAX_JPEG_SEGMENTS = 1000
# Bytes between a JPEG's segments that are not segments (fill bytes, stray data, a
# stuffed FF 00): libjpeg skips them; a camera writes none, an editor a few.
MAX_JPEG_EXTRANEOUS = 64 * 1024
# A progressive JPEG from a camera or an editor has about 10 scans.
MAX_SCANS = 64
# A PNG's chunks: pixel data comes in chunks of 8 KB or more (15 MB: under 2,000 of them);
# other chunks (text, colour, time, private ones) are a handful.
MAX_PNG_CHUNKS = 8192
MAX_PNG_OTHER_CHUNKS = 256
# A GIF's sub-blocks before its first image's pixels (comments, application data) and of
# that image's pixels (255 bytes each but for the last: 15 MB in 62,000 of them).
MAX_GIF_EXTENSION_BLOCKS = 4096
MAX_GIF_IMAGE_BLOCKS = 70_000

JPEG_SOF = {0xC0, 0xC1, 0xC2}  # Huffman-coded baseline, extended and progressive
OTHER_SOF = {0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
# The end of a scan's coded data: a marker that is not a stuffed zero, a restart marker or
# a fill byte (any run of FF before it belongs to the marker).
_SCAN_END = re.compile(rb"(?<!\xff)\xff+[^\x00\xd0-\xd7\xff]")  # from a run's first FF only
_NOT_FF = re.compile(rb"[^\xff]")
# Markers with no length: TEM and the restart markers (libjpeg reads them bare anywhere).
_BARE = {0x01, *range(0xD0, 0xD8)}


def refused(code: str, message: str, status: int = 422) -> DomainError:
    return DomainError(code, message, status=status, field="file")


def too_complex(message: str) -> DomainError:
    return refused("photo_too_complex", message)


def unreadable() -> DomainError:
    return refused("photo_unreadable", "The file is not an image that can be read.")


@dataclass
class Jpeg:
    """A JPEG's first image as its markers describe it."""

    sof: int = 0
    width: int = 0
    height: int = 0
    blocks: dict[int, int] | None = None  # component id -> 8 × 8 blocks
    scans: int = 0
    scan_blocks: int = 0  # the passes all scans make over blocks
    dc_blocks: int = 0  # blocks coded by DC scans: at least one bit each
    dc_components: set[int] = field(default_factory=set)
    entropy_bytes: int = 0
    segments: int = 0
    extraneous: int = 0  # bytes libjpeg skips between segments


def sniffed(data: bytes) -> str:
    """The format the file's first bytes name ('' when none of those a photo may be)."""
    if data[:3] == b"\xff\xd8\xff":
        return "JPEG"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "PNG"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    if data[4:8] == b"ftyp":
        return "HEIF"
    return ""


def check_size(data: bytes, width: int, height: int) -> None:
    """Refuse a file far larger than its pixels need: the rest is padding or pieces that
    only cost time to read."""
    allowed = FLOOR_BYTES + BYTES_PER_PIXEL * width * height
    if len(data) > allowed:
        raise refused(
            "photo_too_large",
            f"The file is {len(data):,} bytes; an image of {width} × {height} pixels needs "
            f"at most {allowed:,} (only the first frame of an animation is kept).",
            status=413,
        )


# --- JPEG -------------------------------------------------------------------------------


def jpeg_layout(data: bytes) -> Jpeg:
    """The first image's frame header and scans, walked marker by marker as libjpeg reads
    them, up to its EOI (or the end of the file); refused past a bound on segments, scans
    or bytes between segments."""
    jpeg = Jpeg()
    at, end = 2, len(data)
    while at + 2 <= end:
        # Searched no further than the bytes still allowed between segments: the cost of
        # a walk never depends on how much padding a file holds.
        window = min(end, at + MAX_JPEG_EXTRANEOUS - jpeg.extraneous + 2)
        if data[at] != 0xFF:  # stray bytes between segments: libjpeg skips them
            found = data.find(b"\xff", at, window)
            found = window if found < 0 else found
            _extraneous(jpeg, found - at)
            at = found
            continue
        marker_at = _NOT_FF.search(data, at, window)  # any run of fill bytes, then the marker
        if marker_at is None:
            _extraneous(jpeg, window - at)
            break
        _extraneous(jpeg, marker_at.start() - at - 1)
        at = marker_at.start() - 1
        marker = data[at + 1]
        if marker == 0x00:  # a stuffed zero outside a scan: skipped, not a marker
            _extraneous(jpeg, 2)
            at += 2
            continue
        jpeg.segments += 1
        if jpeg.segments > MAX_JPEG_SEGMENTS:
            raise too_complex(
                f"The JPEG has more than {MAX_JPEG_SEGMENTS} segments before its image ends; "
                "a camera writes a few dozen."
            )
        if marker in _BARE or marker == 0xD8:
            at += 2
            continue
        if marker == 0xD9 or at + 4 > end:
            break
        segment_end = at + 2 + struct.unpack(">H", data[at + 2 : at + 4])[0]
        if marker in JPEG_SOF or marker in OTHER_SOF:
            _read_frame(jpeg, marker, data[at + 4 : segment_end])
        elif marker == 0xDA:
            _read_scan(jpeg, data[at + 4 : segment_end])
            if jpeg.scans > MAX_SCANS:
                raise too_complex(
                    f"The JPEG has more than {MAX_SCANS} scans; at most {MAX_SCANS} are taken."
                )
            at = _entropy_end(data, segment_end)
            jpeg.entropy_bytes += at - segment_end
            continue
        at = segment_end
    return jpeg


def _extraneous(jpeg: Jpeg, count: int) -> None:
    jpeg.extraneous += count
    if jpeg.extraneous > MAX_JPEG_EXTRANEOUS:
        raise too_complex(
            f"The JPEG has more than {MAX_JPEG_EXTRANEOUS:,} bytes of padding or stray data "
            "between its segments; a camera writes none."
        )


def _read_frame(jpeg: Jpeg, marker: int, frame: bytes) -> None:
    if jpeg.sof or len(frame) < 6:
        return
    jpeg.sof = marker
    jpeg.height, jpeg.width, count = struct.unpack(">HHB", frame[1:6])
    components = [frame[6 + 3 * i : 9 + 3 * i] for i in range(count)]
    components = [c for c in components if len(c) == 3]
    if not components or not jpeg.width or not jpeg.height:
        return
    h_max = max(c[1] >> 4 for c in components) or 1
    v_max = max(c[1] & 15 for c in components) or 1
    jpeg.blocks = {
        c[0]: ceil(ceil(jpeg.width * (c[1] >> 4), h_max), 8)
        * ceil(ceil(jpeg.height * (c[1] & 15), v_max), 8)
        for c in components
    }


def ceil(a: int, b: int) -> int:
    return -(-a // b)


def _read_scan(jpeg: Jpeg, header: bytes) -> None:
    jpeg.scans += 1
    if not header or jpeg.blocks is None:
        return
    ids = [header[1 + 2 * i] for i in range(header[0]) if 1 + 2 * i < len(header)]
    blocks = sum(jpeg.blocks.get(i, 0) for i in ids)
    jpeg.scan_blocks += blocks
    spectral_start = header[1 + 2 * header[0]] if 1 + 2 * header[0] < len(header) else 1
    if spectral_start == 0:
        jpeg.dc_blocks += blocks
        jpeg.dc_components.update(i for i in ids if i in jpeg.blocks)


def _entropy_end(data: bytes, at: int) -> int:
    """Where a scan's coded data ends: at the first marker that is not a stuffed 0xFF00,
    a restart marker or a fill byte (found by one search, whatever the data holds)."""
    found = _SCAN_END.search(data, at)
    return len(data) if found is None else found.end() - 2


# --- PNG --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Png:
    width: int
    height: int
    depth: int
    colour: int
    pixel_bytes: int  # held by its IDAT chunks


def png_layout(data: bytes) -> Png | None:
    """The PNG's header and how many bytes of pixel data it holds, walked chunk by chunk to
    IEND; refused past a bound on chunks (None: no header, for the image library to refuse)."""
    at, held, header, chunks, others = 8, 0, None, 0, 0
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        chunks += 1
        if kind == b"IHDR":
            header = data[at + 8 : at + 8 + 13]
        elif kind == b"IDAT":
            held += length
        elif kind == b"IEND":
            break
        else:
            others += 1
        if chunks > MAX_PNG_CHUNKS or others > MAX_PNG_OTHER_CHUNKS:
            raise too_complex(
                f"The PNG has more than {MAX_PNG_CHUNKS:,} chunks, or more than "
                f"{MAX_PNG_OTHER_CHUNKS} that are not pixel data; an image needs far fewer."
            )
        at += 12 + length
    if header is None or len(header) < 13:
        return None
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    return Png(width, height, depth, colour, held)


# --- GIF --------------------------------------------------------------------------------


def gif_size(data: bytes) -> tuple[int, int]:
    """The GIF's screen size, after walking its blocks up to the end of its first image's
    pixel data; refused past a bound on sub-blocks (comments, application data, pixels)."""
    if len(data) < 13:
        raise unreadable()
    width, height, flags = struct.unpack("<HHB", data[6:11])
    at = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    extension_blocks = 0
    while at < len(data):
        introducer = data[at]
        if introducer == 0x21:  # extension: a label, then sub-blocks
            at, count = _sub_blocks(data, at + 2, MAX_GIF_EXTENSION_BLOCKS - extension_blocks)
            extension_blocks += count
        elif introducer == 0x2C:  # the first image: its descriptor, colours, pixels
            if at + 10 > len(data):
                break
            local = data[at + 9]
            at += 10 + (3 << ((local & 7) + 1) if local & 0x80 else 0) + 1
            _sub_blocks(data, at, MAX_GIF_IMAGE_BLOCKS)
            break
        else:  # the trailer, or something a decoder stops at
            break
    return width, height


def _sub_blocks(data: bytes, at: int, allowed: int) -> tuple[int, int]:
    """Where a run of sub-blocks starting at ``at`` ends, and how many it has; refused past
    ``allowed``."""
    count = 0
    while at < len(data):
        size = data[at]
        at += 1 + size
        if size == 0:
            break
        count += 1
        if count > allowed:
            raise too_complex(
                "The GIF is cut into more pieces than an image needs (comments, application "
                "data or pixels in tiny blocks)."
            )
    return at, count


# --- WebP -------------------------------------------------------------------------------


def webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        return (
            int.from_bytes(data[26:28], "little") & 0x3FFF,
            int.from_bytes(data[28:30], "little") & 0x3FFF,
        )
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    raise unreadable()
