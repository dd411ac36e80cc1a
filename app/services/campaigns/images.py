"""Reading an uploaded image without letting it cost more than a photo should (issue 33).

A few hundred bytes can claim fifty million pixels, and a JPEG can ask its decoder for
thousands of passes over them. So an upload is measured from its headers before any pixel is
decoded: bytes, pixels (per format: some decoders keep several copies), and for a JPEG its
scans, the passes they make over its blocks, the coefficients a multi-scan JPEG keeps, and
whether the file is long enough to hold what it claims. Then:

- a JPEG is decoded at a reduced scale (libjpeg's DCT scaling: 1/2, 1/4 or 1/8), never
  larger than its widest rendition needs;
- other formats are decoded once at full size, then reduced band by band into a small RGB
  copy, so one full-size copy exists at most;
- only the first frame of an animation is read;
- reading stops when it has taken DECODE_SECONDS (checked each time the decoder asks for
  more of the file);
- at most ``photo_decodes`` images are read at once per process (``slots``); one more is
  refused at once with 503 and Retry-After rather than queued.

Nothing here touches the database: callers read images with no transaction open."""

from __future__ import annotations

import ctypes
import ctypes.util
import io
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError
from pillow_heif import register_heif_opener

from app.config import get_settings
from app.errors import DomainError

register_heif_opener()  # Pillow opens HEIC/HEIF files from here on

MAX_BYTES = 15 * 1024 * 1024
# A 50 MP camera. WebP and HEIF decoders hand Pillow a full copy of their own (WebP: two),
# so their limit is lower: one upload's decoding stays under ~300 MB whatever the format.
MAX_PIXELS = 50_000_000
FORMAT_PIXELS = {"WEBP": 16_000_000, "HEIF": 24_000_000}
# MPO: what some phones' JPEGs are; HEIF: an iPhone's photos (HEIC), read by pillow-heif
FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "MPO", "HEIF")
# A progressive JPEG from a camera or an editor has about 10 scans.
MAX_SCANS = 64
# Each scan is a pass over the blocks (8 × 8 pixels) of the components it codes: about
# 6 million passes for a 50 MP progressive photo; 24 million take ~2 s at worst.
MAX_SCAN_BLOCKS = 24_000_000
# A JPEG of several scans keeps every DCT coefficient of the image (2 bytes each) until the
# last scan: 150 MB for 50 MP in 4:2:0 colour; this refuses 4:4:4 colour above ~35 MP.
MAX_COEFFICIENT_BYTES = 200 * 1024 * 1024
DECODE_SECONDS = 10.0
BUSY_SECONDS = 2
BAND_BYTES = 4 * 1024 * 1024  # the pixels converted at once when an image is reduced
JPEG_SOF = {0xC0, 0xC1, 0xC2}  # Huffman-coded baseline, extended and progressive
OTHER_SOF = {0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
DEFLATE_RATIO = 1032  # zlib's best: 258 bytes from one 2-bit code, and a bit of overhead
TRANSPOSE = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}
ORIENTATION = 0x0112


def refused(code: str, message: str, status: int = 422) -> DomainError:
    return DomainError(code, message, status=status, field="file")


def _too_complex(message: str) -> DomainError:
    return refused("photo_too_complex", message)


def _cut_short(kind: str, width: int, height: int, needed: int, held: int) -> DomainError:
    return refused(
        "photo_unreadable",
        f"The file is cut short: a {kind} of {width} × {height} pixels holds at least "
        f"{needed:,} bytes of image data; this one has {held:,}.",
    )


# --- at most N at once ------------------------------------------------------------------


class Slots:
    """At most ``size`` images read at once in this process; one more is refused at once."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._free = threading.BoundedSemaphore(size)

    @contextmanager
    def taken(self) -> Iterator[None]:
        if not self._free.acquire(blocking=False):
            raise DomainError(
                "photo_busy",
                f"The server is reading as many photos as it reads at once ({self.size}); "
                f"nothing was kept. Try again in {BUSY_SECONDS} seconds.",
                status=503,
                field="file",
                retry_after=BUSY_SECONDS,
            )
        try:
            yield
        finally:
            self._free.release()
            _give_memory_back()


_slots: Slots | None = None
_slots_lock = threading.Lock()


def slots() -> Slots:
    """This process's slots, sized by the PHOTO_DECODES setting."""
    global _slots
    with _slots_lock:
        if _slots is None:
            _slots = Slots(get_settings().photo_decodes)
        return _slots


_LIBC = ctypes.util.find_library("c")
_malloc_trim = getattr(ctypes.CDLL(_LIBC), "malloc_trim", None) if _LIBC else None


def _give_memory_back() -> None:
    """glibc keeps freed memory for later; a decode's ~200 MB would stay with the process
    for good (measured: 137 MB at start, 2.3 GB after a few bombs). Hand it back."""
    if _malloc_trim is not None:
        _malloc_trim(0)


# --- reading ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pixels:
    """An upload's pixels: upright, RGB on white, no metadata at all, at least ``widest``
    wide (or the whole image when it is narrower); ``width`` × ``height`` is the upright
    image's full size."""

    image: Image.Image
    width: int
    height: int


class _TooSlow(Exception):
    pass


class _Timed(io.BytesIO):
    """The upload, refusing to be read any further once the deadline has passed: a
    decoder asks for the file piece by piece, so reading stops within one piece."""

    def __init__(self, data: bytes, deadline: float) -> None:
        super().__init__(data)
        self.deadline = deadline

    def read(self, size: int | None = -1) -> bytes:
        if time.monotonic() > self.deadline:
            raise _TooSlow
        return super().read(size)


def check(data: bytes) -> str:
    """The upload's format, or a refusal (a DomainError naming the limit), from its headers
    alone: no pixel is decoded and no more memory than the file's is taken, so this runs
    before a decoding slot is asked for (a liar costs no slot)."""
    if len(data) > MAX_BYTES:
        raise refused(
            "photo_too_large", f"A photo may be {MAX_BYTES // 2**20} MB at most.", status=413
        )
    if data[8:12] == b"WEBP" and data[:4] == b"RIFF":  # opening it allocates the canvas
        _check_pixels("WEBP", *_webp_size(data))
        return "WEBP"
    try:
        with Image.open(io.BytesIO(data)) as image:  # reads the headers only
            kind, (width, height) = image.format or "", image.size
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError):
        raise _unreadable() from None
    if kind not in FORMATS:
        raise refused("photo_type", "A photo must be a JPEG, HEIC, PNG, WebP or GIF image.")
    _check_pixels(kind, width, height)
    if kind in ("JPEG", "MPO"):
        _check_jpeg(data)
    elif kind == "PNG":
        _check_png(data)
    return kind


def read_pixels(data: bytes, widest: int) -> Pixels:
    """The upload's pixels reduced for renditions at most ``widest`` wide, or a refusal.
    Call it inside ``slots().taken()``."""
    kind = check(data)
    try:
        with Image.open(_Timed(data, time.monotonic() + DECODE_SECONDS)) as image:
            if image.format != kind:  # HEIF and WebP open lazily: the same file, read again
                raise _unreadable()
            return _decoded(image, kind, widest)
    except DomainError:
        raise
    except _TooSlow:
        raise _too_complex(
            f"The image took more than {DECODE_SECONDS:g} s to read; it was given up."
        ) from None
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError):
        raise _unreadable() from None


def _unreadable() -> DomainError:
    return refused("photo_unreadable", "The file is not an image that can be read.")


def _check_pixels(kind: str, width: int, height: int) -> None:
    limit = FORMAT_PIXELS.get(kind, MAX_PIXELS)
    if width * height > limit:
        what = {"WEBP": "a WebP image", "HEIF": "a HEIC image"}.get(kind, "a photo")
        raise refused(
            "photo_too_many_pixels",
            f"The image is {width} × {height} pixels; {what} may have at most "
            f"{limit // 10**6} million pixels.",
        )


def _decoded(image: Image.Image, kind: str, widest: int) -> Pixels:
    jpeg = kind in ("JPEG", "MPO")
    # A JPEG's EXIF is read with its headers; other formats may keep it after the pixels.
    turn = TRANSPOSE.get(_orientation(image)) if jpeg else None
    width, height = image.size
    sideways = turn in (TRANSPOSE[5], TRANSPOSE[6], TRANSPOSE[7], TRANSPOSE[8])
    upright_width = height if sideways else width
    scale = min(1.0, widest / upright_width)
    if jpeg:  # libjpeg decodes at 1/2, 1/4 or 1/8 scale, never below the size asked for
        image.draft(image.mode, (max(1, int(width * scale)), max(1, int(height * scale))))
    image.load()
    if not jpeg:
        turn = TRANSPOSE.get(_orientation(image))
        sideways = turn in (TRANSPOSE[5], TRANSPOSE[6], TRANSPOSE[7], TRANSPOSE[8])
        upright_width = height if sideways else width
    loaded_width = image.size[1] if sideways else image.size[0]
    small = _reduced(image, max(1, loaded_width // max(1, min(widest, upright_width))))
    if turn is not None:
        small = small.transpose(turn)
    return Pixels(small, *((height, width) if sideways else (width, height)))


def _orientation(image: Image.Image) -> int:
    try:
        return int(image.getexif().get(ORIENTATION, 1))
    except (ValueError, TypeError, SyntaxError, struct.error):
        return 1  # unreadable EXIF: taken as it is, upright


def _reduced(image: Image.Image, factor: int) -> Image.Image:
    """A new RGB image 1/``factor`` the size, on white where the image is transparent,
    holding nothing but pixels; made band by band, so the full-size image is the only
    full-size copy."""
    width, height = image.size
    out = Image.new("RGB", (_ceil(width, factor), _ceil(height, factor)), (255, 255, 255))
    band = max(1, BAND_BYTES // (4 * width * factor)) * factor
    for top in range(0, height, band):
        strip = _rgb(image.crop((0, top, width, min(height, top + band))))
        if factor > 1:  # averaged before the white goes under it: the same, and cheaper
            strip = strip.reduce(factor)
        out.paste(_on_white(strip), (0, top // factor))
    return out


def _rgb(image: Image.Image) -> Image.Image:
    transparent = image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or (
        image.mode == "P" and "transparency" in image.info
    )
    wanted = "RGBA" if transparent else "RGB"
    return image if image.mode == wanted else image.convert(wanted)


def _on_white(image: Image.Image) -> Image.Image:
    if image.mode == "RGB":
        return image
    white = Image.new("RGB", image.size, (255, 255, 255))
    white.paste(image, mask=image.getchannel("A"))
    return white


# --- what the headers claim -------------------------------------------------------------


def _webp_size(data: bytes) -> tuple[int, int]:
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
    raise _unreadable()


@dataclass
class _Jpeg:
    sof: int = 0
    width: int = 0
    height: int = 0
    blocks: dict[int, int] | None = None  # component id -> 8 × 8 blocks
    scans: int = 0
    scan_blocks: int = 0  # the passes all scans make over blocks
    dc_blocks: int = 0  # blocks coded by DC scans: at least one bit each
    dc_components: set[int] | None = None
    entropy_bytes: int = 0


def _check_jpeg(data: bytes) -> None:
    """Refuse, from its markers alone, a JPEG (the first image of an MPO) that would cost
    more than a photo: too many scans or passes, too many coefficients to keep, a coding
    cameras never use, or too few bytes for what it claims (a Huffman-coded DC scan spends
    at least one bit on every block it covers)."""
    jpeg = _jpeg_layout(data)
    if jpeg.sof in OTHER_SOF:
        raise refused(
            "photo_type",
            "This JPEG is arithmetic-coded, lossless or hierarchical, which cameras do not "
            "write; save it as an ordinary JPEG.",
        )
    if not jpeg.blocks or jpeg.sof not in JPEG_SOF:
        return  # Pillow refuses what it cannot read
    # Every component has a DC scan (the standard puts it before any other scan of it).
    covered = jpeg.dc_components or set()
    needed = max(jpeg.dc_blocks, sum(jpeg.blocks.values())) // 8
    if not covered >= set(jpeg.blocks) or jpeg.entropy_bytes < needed:
        raise _cut_short("JPEG", jpeg.width, jpeg.height, needed, jpeg.entropy_bytes)
    if jpeg.scans > MAX_SCANS:
        raise _too_complex(f"The JPEG has {jpeg.scans} scans; at most {MAX_SCANS} are taken.")
    if jpeg.scan_blocks > MAX_SCAN_BLOCKS:
        raise _too_complex(
            f"The JPEG's scans make {jpeg.scan_blocks:,} passes over its 8 × 8 blocks; at "
            f"most {MAX_SCAN_BLOCKS:,} are taken."
        )
    coefficients = 128 * sum(jpeg.blocks.values())
    if (jpeg.sof == 0xC2 or jpeg.scans > 1) and coefficients > MAX_COEFFICIENT_BYTES:
        raise _too_complex(
            f"Reading this progressive JPEG needs {coefficients // 2**20} MB; at most "
            f"{MAX_COEFFICIENT_BYTES // 2**20} MB are given. Save it as a baseline JPEG."
        )


def _jpeg_layout(data: bytes) -> _Jpeg:
    """The first image's frame header and scans, walked segment by segment up to its EOI
    (or the end of the file)."""
    jpeg = _Jpeg(dc_components=set())
    at, end = 2, len(data)
    while at + 4 <= end:
        if data[at] != 0xFF:  # stray bytes between segments: libjpeg skips them too
            at = data.find(b"\xff", at)
            if at < 0:
                break
            continue
        marker = data[at + 1]
        if marker == 0xFF or marker == 0x01 or 0xD0 <= marker <= 0xD8:
            at += 1 if marker == 0xFF else 2
            continue
        if marker == 0xD9:
            break
        segment_end = at + 2 + struct.unpack(">H", data[at + 2 : at + 4])[0]
        if marker in JPEG_SOF or marker in OTHER_SOF:
            _read_frame(jpeg, marker, data[at + 4 : segment_end])
        elif marker == 0xDA:
            _read_scan(jpeg, data[at + 4 : segment_end])
            at = _entropy_end(data, segment_end)
            jpeg.entropy_bytes += at - segment_end
            continue
        at = segment_end
    return jpeg


def _read_frame(jpeg: _Jpeg, marker: int, frame: bytes) -> None:
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
        c[0]: _ceil(_ceil(jpeg.width * (c[1] >> 4), h_max), 8)
        * _ceil(_ceil(jpeg.height * (c[1] & 15), v_max), 8)
        for c in components
    }


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _read_scan(jpeg: _Jpeg, header: bytes) -> None:
    jpeg.scans += 1
    if not header or jpeg.blocks is None:
        return
    ids = [header[1 + 2 * i] for i in range(header[0]) if 1 + 2 * i < len(header)]
    blocks = sum(jpeg.blocks.get(i, 0) for i in ids)
    jpeg.scan_blocks += blocks
    spectral_start = header[1 + 2 * header[0]] if 1 + 2 * header[0] < len(header) else 1
    if spectral_start == 0:
        jpeg.dc_blocks += blocks
        assert jpeg.dc_components is not None
        jpeg.dc_components.update(i for i in ids if i in jpeg.blocks)


def _entropy_end(data: bytes, at: int) -> int:
    """Where a scan's coded data ends: at the first marker that is not a stuffed 0xFF00
    or a restart marker."""
    while True:
        at = data.find(b"\xff", at)
        if at < 0 or at + 1 >= len(data):
            return len(data)
        following = data[at + 1]
        if following == 0 or 0xD0 <= following <= 0xD7 or following == 0xFF:
            at += 1 if following == 0xFF else 2
            continue
        return at


def _check_png(data: bytes) -> None:
    """A PNG's pixels are deflated, which shrinks them 1032 times at best: fewer IDAT bytes
    than that means the file is cut short, whatever its header claims."""
    at, held, header = 8, 0, None
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        if kind == b"IHDR":
            header = data[at + 8 : at + 8 + 13]
        elif kind == b"IDAT":
            held += length
        elif kind == b"IEND":
            break
        at += 12 + length
    if header is None or len(header) < 13:
        return  # Pillow refuses what it cannot read
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(colour, 4)
    raw = height * (1 + _ceil(width * depth * channels, 8))
    needed = raw // DEFLATE_RATIO
    if held < needed:
        raise _cut_short("PNG", width, height, needed, held)
