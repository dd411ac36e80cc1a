"""Reading an uploaded image without letting it cost more than a photo should (issues 33, 45).

A few hundred bytes can claim fifty million pixels, and a JPEG can ask its decoder for
thousands of passes over them. So an upload is measured from its headers before any pixel is
decoded (``image_headers``: bounded walks that refuse a file of too many pieces, or far
larger than its pixels need): bytes, pixels (per format: some decoders keep several copies),
and for a JPEG its scans, the passes they make over its blocks, the coefficients a
multi-scan JPEG keeps, and whether the file is long enough to hold what it claims. Then:

- a JPEG is decoded at a reduced scale (libjpeg's DCT scaling: 1/2, 1/4 or 1/8), never
  larger than its widest rendition needs;
- other formats are decoded once at full size, then reduced band by band into a small RGB
  copy, so one full-size copy exists at most;
- only the first frame of an animation is read.

Both the check and the decode run in a worker process bounded in processor time, memory and
wall-clock time (``decoding``); the functions here are what runs there."""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError
from pillow_heif import register_heif_opener

from app.errors import DomainError
from app.services.campaigns.image_headers import (
    JPEG_SOF,
    MAX_BYTES,
    OTHER_SOF,
    ceil,
    check_size,
    gif_size,
    jpeg_layout,
    png_layout,
    refused,
    sniffed,
    too_complex,
    unreadable,
    webp_size,
)

register_heif_opener()  # Pillow opens HEIC/HEIF files from here on
Image.init()  # every format's reader loaded once, in the process workers are forked from

# A 50 MP camera. WebP and HEIF decoders hand Pillow a full copy of their own (WebP: two),
# so their limit is lower: one upload's decoding stays under ~300 MB whatever the format.
MAX_PIXELS = 50_000_000
FORMAT_PIXELS = {"WEBP": 16_000_000, "HEIF": 24_000_000}
# MPO: what some phones' JPEGs are; HEIF: an iPhone's photos (HEIC), read by pillow-heif
FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "MPO", "HEIF")
# Each scan is a pass over the blocks (8 × 8 pixels) of the components it codes: about
# 6 million passes for a 50 MP progressive photo; 24 million take ~2 s at worst.
MAX_SCAN_BLOCKS = 24_000_000
# A JPEG of several scans keeps every DCT coefficient of the image (2 bytes each) until the
# last scan: 150 MB for 50 MP in 4:2:0 colour; this refuses 4:4:4 colour above ~35 MP.
MAX_COEFFICIENT_BYTES = 200 * 1024 * 1024
BAND_BYTES = 4 * 1024 * 1024  # the pixels converted at once when an image is reduced
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
_LIBRARY_ERRORS = (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError)
_READ_ERRORS = (*_LIBRARY_ERRORS, ValueError, struct.error, IndexError)


def _cut_short(kind: str, width: int, height: int, needed: int, held: int) -> DomainError:
    return refused(
        "photo_unreadable",
        f"The file is cut short: a {kind} of {width} × {height} pixels holds at least "
        f"{needed:,} bytes of image data; this one has {held:,}.",
    )


# --- reading ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pixels:
    """An upload's pixels: upright, RGB on white, no metadata at all, at least ``widest``
    wide (or the whole image when it is narrower); ``width`` × ``height`` is the upright
    image's full size."""

    image: Image.Image
    width: int
    height: int


@dataclass(frozen=True)
class Made:
    """What a worker hands back: the upright image's full size and its renditions (width,
    JPEG), smallest first."""

    width: int
    height: int
    files: tuple[tuple[int, bytes], ...]


def check_all(datas: list[bytes]) -> list[str]:
    """Each upload's format, or the first refusal: every file of a post is checked before
    any is decoded, so a post that will be refused costs no decoding."""
    return [check(data) for data in datas]


def check(data: bytes) -> str:
    """The upload's format, or a refusal (a DomainError naming the limit), from its headers
    alone: no pixel is decoded and no more memory than the file's is taken. Each format is
    walked by ``image_headers`` (bounded) before the image library reads a byte of it."""
    if len(data) > MAX_BYTES:
        raise refused(
            "photo_too_large", f"A photo may be {MAX_BYTES // 2**20} MB at most.", status=413
        )
    claimed = sniffed(data)
    if claimed == "WEBP":  # opening it allocates the canvas
        width, height = webp_size(data)
        _check_pixels("WEBP", width, height)
        check_size(data, width, height)
        return "WEBP"
    if claimed == "JPEG":
        _check_jpeg(data)
    elif claimed == "PNG":
        _check_png(data)
    elif claimed == "GIF":
        width, height = gif_size(data)
        _check_pixels("GIF", width, height)
        check_size(data, width, height)
    try:
        with Image.open(io.BytesIO(data)) as image:  # reads the headers only
            kind, (width, height) = image.format or "", image.size
    except _READ_ERRORS:
        raise unreadable() from None
    if kind not in FORMATS:
        raise refused("photo_type", "A photo must be a JPEG, HEIC, PNG, WebP or GIF image.")
    _check_pixels(kind, width, height)
    check_size(data, width, height)
    return kind


def make(data: bytes, kind: str | None, widths: tuple[int, ...], quality: int) -> Made:
    """The upload's renditions (each of ``widths`` narrower than the image, and the image
    itself when narrower than the widest), or a refusal; ``kind`` from ``check`` (None:
    checked here first)."""
    pixels = read_pixels(data, widths[-1], kind or check(data))
    return Made(pixels.width, pixels.height, tuple(_sizes(pixels, widths, quality)))


def read_pixels(data: bytes, widest: int, kind: str) -> Pixels:
    """The upload's pixels reduced for renditions at most ``widest`` wide, or a refusal."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format != kind:  # HEIF and WebP open lazily: the same file, read again
                raise unreadable()
            return _decoded(image, kind, widest)
    except DomainError:
        raise
    except _READ_ERRORS:
        raise unreadable() from None


def _sizes(pixels: Pixels, widths: tuple[int, ...], quality: int) -> list[tuple[int, bytes]]:
    """Each width, the widest first and each narrower one from the one before it (cheaper
    than from the reduced pixels each time); heights from the full image's proportions."""
    wanted = {w for w in widths if w < pixels.width} | {min(pixels.width, widths[-1])}
    files = []
    source = pixels.image
    for width in sorted(wanted, reverse=True):
        height = max(1, round(pixels.height * width / pixels.width))
        source = source.resize((width, height), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        source.save(out, "JPEG", quality=quality, optimize=True, progressive=True)
        files.append((width, out.getvalue()))
    return files[::-1]


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
    out = Image.new("RGB", (ceil(width, factor), ceil(height, factor)), (255, 255, 255))
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


def _check_jpeg(data: bytes) -> None:
    """Refuse, from its markers alone, a JPEG (the first image of an MPO) that would cost
    more than a photo: too many segments, scans or passes, too many coefficients to keep,
    a coding cameras never use, too few bytes for what it claims (a Huffman-coded DC scan
    spends at least one bit on every block it covers), or far more bytes than it needs."""
    jpeg = jpeg_layout(data)
    if jpeg.sof in OTHER_SOF:
        raise refused(
            "photo_type",
            "This JPEG is arithmetic-coded, lossless or hierarchical, which cameras do not "
            "write; save it as an ordinary JPEG.",
        )
    if not jpeg.blocks or jpeg.sof not in JPEG_SOF:
        return  # Pillow refuses what it cannot read
    _check_pixels("JPEG", jpeg.width, jpeg.height)
    # Every component has a DC scan (the standard puts it before any other scan of it).
    needed = max(jpeg.dc_blocks, sum(jpeg.blocks.values())) // 8
    if not jpeg.dc_components >= set(jpeg.blocks) or jpeg.entropy_bytes < needed:
        raise _cut_short("JPEG", jpeg.width, jpeg.height, needed, jpeg.entropy_bytes)
    check_size(data, jpeg.width, jpeg.height)
    if jpeg.scan_blocks > MAX_SCAN_BLOCKS:
        raise too_complex(
            f"The JPEG's scans make {jpeg.scan_blocks:,} passes over its 8 × 8 blocks; at "
            f"most {MAX_SCAN_BLOCKS:,} are taken."
        )
    coefficients = 128 * sum(jpeg.blocks.values())
    if (jpeg.sof == 0xC2 or jpeg.scans > 1) and coefficients > MAX_COEFFICIENT_BYTES:
        raise too_complex(
            f"Reading this progressive JPEG needs {coefficients // 2**20} MB; at most "
            f"{MAX_COEFFICIENT_BYTES // 2**20} MB are given. Save it as a baseline JPEG."
        )


def _check_png(data: bytes) -> None:
    """A PNG's pixels are deflated, which shrinks them 1032 times at best: fewer IDAT bytes
    than that means the file is cut short, whatever its header claims."""
    png = png_layout(data)
    if png is None:
        return  # Pillow refuses what it cannot read
    _check_pixels("PNG", png.width, png.height)
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(png.colour, 4)
    raw = png.height * (1 + ceil(png.width * png.depth * channels, 8))
    needed = raw // DEFLATE_RATIO
    if png.pixel_bytes < needed:
        raise _cut_short("PNG", png.width, png.height, needed, png.pixel_bytes)
    check_size(data, png.width, png.height)
