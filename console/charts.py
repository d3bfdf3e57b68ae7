"""Small server-side SVG charts (no JavaScript library, nothing from a CDN)."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape

WIDTH, HEIGHT, PAD = 600, 160, 24


def throughput_svg(series: list[tuple[int, int, int]]) -> str:
    """Stacked bars per minute: fetched (ok) and failed; ``series`` is (minute, fetched, failed)."""
    peak = max((ok + bad for _, ok, bad in series), default=0) or 1
    bar = (WIDTH - 2 * PAD) / max(1, len(series))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="Fetches per minute over the last hour, peak {peak}" class="chart">',
        f'<text x="{PAD}" y="14" class="axis">{peak}/min</text>',
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" class="axis-line"/>',
    ]
    scale = (HEIGHT - 2 * PAD) / peak
    for i, (minute, ok, bad) in enumerate(series):
        x = PAD + i * bar
        label = datetime.fromtimestamp(minute, tz=UTC).strftime("%H:%M UTC")
        h_ok, h_bad = ok * scale, bad * scale
        y = HEIGHT - PAD - h_ok
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar * 0.8:.1f}" height="{h_ok:.1f}" class="ok">'
            f"<title>{label}: {ok} fetched, {bad} failed</title></rect>"
        )
        if bad:
            parts.append(
                f'<rect x="{x:.1f}" y="{y - h_bad:.1f}" width="{bar * 0.8:.1f}" height="{h_bad:.1f}" class="bad"/>'
            )
    parts.append(f'<text x="{PAD}" y="{HEIGHT - 6}" class="axis">-60 min</text>')
    parts.append(f'<text x="{WIDTH - PAD - 24}" y="{HEIGHT - 6}" class="axis">now</text></svg>')
    return "".join(parts)


def bar_chart_svg(items: list[tuple[str, int]]) -> str:
    """Horizontal bars, one per (label, count)."""
    height = max(1, len(items)) * 22 + 8
    peak = max((n for _, n in items), default=0) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="Fetches by outcome class" class="chart">'
    ]
    for i, (label, count) in enumerate(items):
        y = 4 + i * 22
        width = (WIDTH - 160) * count / peak
        css = "ok" if label in ("2xx", "3xx") else "bad"
        parts.append(
            f'<text x="0" y="{y + 14}" class="axis">{escape(label)}</text>'
            f'<rect x="70" y="{y}" width="{width:.1f}" height="16" class="{css}"/>'
            f'<text x="{74 + width:.1f}" y="{y + 14}" class="axis">{count}</text>'
        )
    if not items:
        parts.append('<text x="0" y="20" class="axis">nothing fetched yet</text>')
    parts.append("</svg>")
    return "".join(parts)
