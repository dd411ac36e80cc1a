"""Turning values into what a page shows: Jinja filters, Markdown, charts, QR codes. Pure."""
