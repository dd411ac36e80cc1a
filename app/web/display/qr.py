"""QR codes for the pages (segno): inline SVG, so nothing is fetched and it prints."""

from __future__ import annotations

import segno
from markupsafe import Markup


def qr_svg(url: str, label: str) -> Markup:
    """An inline SVG QR code of ``url``; ``label`` is its text alternative (role img).
    Dark modules on a white quiet zone, so it scans in dark mode too."""
    code = segno.make(url, error="m")
    svg = code.svg_inline(
        scale=4, border=4, dark="#000", light="#fff", svgclass="qr", lineclass=None, omitsize=True
    )
    # the label goes in as escaped text: role="img" with aria-label and a <title>
    head, rest = svg.split(">", 1)
    return Markup('{} role="img" aria-label="{}"><title>{}</title>').format(
        Markup(head), label, label
    ) + Markup(rest)
