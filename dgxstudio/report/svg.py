"""SVG pictures without Qt: the topology as laid out on the canvas, and simple charts.

Everything written here is escaped, so a device named ``<script>`` stays text.
"""

from __future__ import annotations

import math
from html import escape

from ..analysis.cluster_overview import Overview, _bw, build_overview
from ..model.layout import default_position, drawn_links, group_position, hidden_by_collapsed
from ..model.topology import Topology

FAMILY = {"nvlink": "#76b900", "pcie": "#7f7f7f", "infiniband": "#c0504d", "ethernet": "#8064a2", "cpu": "#2e75b6"}
KIND = {"gpu": "#76b900", "nvswitch": "#4a90d9", "nic": "#e8a33d", "ib_switch": "#c0504d", "eth_switch": "#8064a2",
        "pcie_switch": "#7f7f7f", "cpu": "#2e75b6"}
SERIES = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#46f0f0", "#f032e6", "#008080"]


def topology_svg(topo: Topology, width: int = 960) -> str:
    """The canvas as drawn at fit: a large cluster as its structure (``overview_svg``), anything else
    with collapsed groups as boxes and their outside links as bundles."""
    overview = build_overview(topo)
    if overview is not None:
        return overview_svg(topo, overview, width)
    hidden = hidden_by_collapsed(topo)
    pos: dict[str, tuple[float, float]] = {}
    for i, d in enumerate(topo.devices):
        if d not in hidden:
            pos[d] = topo.layout.positions.get(d, default_position(i))
    for gid in set(hidden.values()):
        pos[gid] = group_position(topo, gid)
    if not pos:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="60"><text x="10" y="30">empty topology</text></svg>'
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    x0, y0 = min(xs) - 80, min(ys) - 50
    span_x, span_y = max(xs) - x0 + 80, max(ys) - y0 + 50
    scale = min(width / span_x, 1.5)
    height = int(span_y * scale) + 10

    def xy(p):
        return ((p[0] - x0) * scale, (p[1] - y0) * scale)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="sans-serif" font-size="{max(7, int(11 * scale))}">',
           f'<title>{escape(topo.name)}</title><rect width="{width}" height="{height}" fill="#fbfbfb"/>']
    for a, b, links, _bundle in drawn_links(topo, hidden):
        if a not in pos or b not in pos:
            continue
        (ax, ay), (bx, by) = xy(pos[a]), xy(pos[b])
        count = sum(lk.count for lk in links)
        bw = sum(topo.link_bandwidth_per_direction_Bps(lk) for lk in links)
        lt = topo.link_type_of(links[0])
        w = 1.0 + 0.9 * math.log2(1 + bw / 1e9)
        out.append(f'<line x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" stroke="{FAMILY.get(lt.family if lt else "", "#000")}"'
                   f' stroke-width="{w * scale:.2f}" stroke-opacity="0.8"><title>{escape(", ".join(lk.id for lk in links))}: '
                   f'{count} x {escape(links[0].type)}</title></line>')
        if count > 1 and scale > 0.35:
            out.append(f'<text x="{(ax + bx) / 2:.1f}" y="{(ay + by) / 2:.1f}" text-anchor="middle" fill="#333">x{count}</text>')
    bw_, bh = 104 * scale, 50 * scale
    for key, p in pos.items():
        x, y = xy(p)
        if key in topo.devices:
            d = topo.devices[key]
            color, label = KIND.get(d.kind, "#888"), d.name
        else:
            color, label = "#404040", topo.groups[key].name
        out.append(f'<g><rect x="{x - bw_ / 2:.1f}" y="{y - bh / 2:.1f}" width="{bw_:.1f}" height="{bh:.1f}" rx="4" '
                   f'fill="#ffffff" stroke="{color}" stroke-width="1.5"/>')
        if scale > 0.3:
            out.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{escape(label)}</text>')
        out.append(f'<title>{escape(label)} ({escape(key)})</title></g>')
    out.append("</svg>")
    return "\n".join(out)


def overview_svg(topo: Topology, ov: Overview, width: int = 960) -> str:
    """A large cluster as the canvas shows it at fit: its tiers as rows of blocks (scalable units,
    switch groups), one bundle per pair of blocks, labelled with its link count and bandwidth per
    direction (a line per link would be a solid wall: 49,152 of them on 2,048 DGX H100)."""
    rects = [b.rect for b in ov.blocks.values()]
    margin = 110  # px on the left for the tiers' names
    x0 = min(r[0] for r in rects) - 20
    y0 = min(min(r[1] for r in rects), min((t[1] for t in ov.tier_rows), default=0.0)) - 40
    x1 = max(r[0] + r[2] for r in rects) + 20
    y1 = max(r[1] + r[3] for r in rects) + 40
    scale = (width - margin) / (x1 - x0)
    height = int((y1 - y0) * scale) + 10
    font = max(7.0, 13 * scale)

    def xy(x, y):
        return margin + (x - x0) * scale, (y - y0) * scale
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="sans-serif" font-size="{font:.1f}">',
           f'<title>{escape(topo.name)}</title><rect width="{width}" height="{height}" fill="#fbfbfb"/>']
    for name, top, _h in ov.tier_rows:
        out.append(f'<text x="6" y="{xy(x0, top)[1] + 11:.1f}" font-size="11" fill="#555" font-weight="bold">'
                   f'{escape(name)}</text>')
    widest = max((bu.bandwidth_Bps for bu in ov.bundles), default=1.0) or 1.0
    for bu in ov.bundles:
        ra, rb = ov.blocks[bu.a].rect, ov.blocks[bu.b].rect
        (ax, ay), (bx, by) = xy(ra[0] + ra[2] / 2, ra[1] + ra[3] / 2), xy(rb[0] + rb[2] / 2, rb[1] + rb[3] / 2)
        w = (1.0 + 5.0 * bu.bandwidth_Bps / widest) * max(scale, 0.4)
        out.append(f'<line x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" stroke="{FAMILY.get(bu.family or "", "#000")}" '
                   f'stroke-width="{w:.2f}" stroke-opacity="0.55"><title>{escape(bu.label)}</title></line>')
    if len(ov.bundles) <= 64:  # (more labels than that overlap into a blot; each line keeps its title)
        spots = []
        for bu in ov.bundles:
            ra, rb = ov.blocks[bu.a].rect, ov.blocks[bu.b].rect
            spots.append(xy((ra[0] + ra[2] / 2 + rb[0] + rb[2] / 2) / 2, (ra[1] + ra[3] / 2 + rb[1] + rb[3] / 2) / 2))
        # every label with its bandwidth per direction where none then overlaps another, else the counts
        for form in (lambda bu: f"x{bu.count:,}, {_bw(bu.bandwidth_Bps)}/dir", lambda bu: f"x{bu.count:,}"):
            texts = [form(bu) for bu in ov.bundles]
            boxes = [(x - 0.3 * font * len(t), y - font, x + 0.3 * font * len(t), y + 0.3 * font)
                     for (x, y), t in zip(spots, texts)]
            if not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                       for i, a in enumerate(boxes) for b in boxes[i + 1:]):
                break
        for (x, y), text, box in zip(spots, texts, boxes):
            out.append(f'<rect x="{box[0]:.1f}" y="{box[1]:.1f}" width="{box[2] - box[0]:.1f}" height="{1.3 * font:.1f}" '
                       f'fill="#fbfbfb" fill-opacity="0.85"/>'
                       f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" fill="#333">{escape(text)}</text>')
    for b in ov.blocks.values():
        (x, y), w, h = xy(b.rect[0], b.rect[1]), b.rect[2] * scale, b.rect[3] * scale
        color = "#404040" if b.tier == 0 else KIND.get(topo.devices[b.members[0]].kind, "#888") if b.members else "#888"
        label = _fit(b.short or b.label, w, font)
        out.append(f'<g><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="4" fill="#ffffff" '
                   f'stroke="{color}" stroke-width="1.5"/>'
                   f'<text x="{x + w / 2:.1f}" y="{y + h / 2 - 0.2 * font:.1f}" text-anchor="middle" font-weight="bold">'
                   f'{escape(label)}</text>'
                   f'<text x="{x + w / 2:.1f}" y="{y + h / 2 + 1.0 * font:.1f}" text-anchor="middle" fill="#555">'
                   f'{escape(_fit(b.summary, w, font))}</text><title>{escape(b.label)}: {escape(b.summary)}</title></g>')
    out.append("</svg>")
    return "\n".join(out)


def _fit(text: str, width: float, font: float) -> str:
    """``text`` cut with an ellipsis to about ``width`` px at ``font`` px (a sans-serif character is
    about 0.55 em wide on average); its whole stays in the element's title."""
    most = max(4, int(width / (0.55 * font)))
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    step = 10 ** math.floor(math.log10((hi - lo) / n))
    for m in (1, 2, 5, 10):
        if (hi - lo) / (step * m) <= n:
            step *= m
            break
    start = math.ceil(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step) + 1)]


def line_chart(series: list[tuple[str, list[float], list[float]]], title: str, xlabel: str, ylabel: str,
               log_x: bool = False, hline: tuple[str, float] | None = None, width: int = 760, height: int = 320,
               x_format=lambda v: f"{v:g}", y_format=lambda v: f"{v:g}") -> str:
    """Lines with markers; x may be logarithmic (base 2 ticks)."""
    left, right, top, bottom = 70, 20, 30, 45
    all_x = [x for _, xs, _ in series for x in xs]
    all_y = [y for _, _, ys in series for y in ys] + ([hline[1]] if hline else [])
    if not all_x:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="40"><text x="5" y="20">no data</text></svg>'
    fx = (lambda v: math.log2(v)) if log_x else (lambda v: v)
    xlo, xhi = fx(min(all_x)), fx(max(all_x))
    ylo, yhi = 0.0, max(all_y) * 1.08 or 1.0
    if xhi == xlo:
        xhi = xlo + 1

    def px(v):
        return left + (fx(v) - xlo) / (xhi - xlo) * (width - left - right)

    def py(v):
        return height - bottom - (v - ylo) / (yhi - ylo) * (height - top - bottom)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',  # Qt's SVG Tiny reads 100% as 100 px
           f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{escape(title)}</text>',
           f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#000"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#000"/>',
           f'<text x="{(left + width - right) / 2}" y="{height - 8}" text-anchor="middle">{escape(xlabel)}</text>',
           f'<text x="14" y="{(top + height - bottom) / 2}" text-anchor="middle" transform="rotate(-90 14 {(top + height - bottom) / 2})">'
           f'{escape(ylabel)}</text>']
    xt = [2 ** k for k in range(int(math.ceil(xlo)), int(xhi) + 1, max(1, int((xhi - xlo) // 8) or 1))] if log_x \
        else _ticks(min(all_x), max(all_x))
    for v in xt:
        out.append(f'<line x1="{px(v):.1f}" y1="{height - bottom}" x2="{px(v):.1f}" y2="{height - bottom + 4}" stroke="#000"/>'
                   f'<text x="{px(v):.1f}" y="{height - bottom + 16}" text-anchor="middle">{escape(x_format(v))}</text>')
    for v in _ticks(ylo, yhi):
        out.append(f'<line x1="{left}" y1="{py(v):.1f}" x2="{width - right}" y2="{py(v):.1f}" stroke="#e5e5e5"/>'
                   f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{escape(y_format(v))}</text>')
    if hline:
        out.append(f'<line x1="{left}" y1="{py(hline[1]):.1f}" x2="{width - right}" y2="{py(hline[1]):.1f}" stroke="#d00000" '
                   f'stroke-dasharray="6 4"/><text x="{width - right - 4}" y="{py(hline[1]) - 4:.1f}" text-anchor="end" '
                   f'fill="#d00000">{escape(hline[0])}</text>')
    for i, (label, xs, ys) in enumerate(series):
        color = SERIES[i % len(SERIES)]
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
        if len(xs) <= 64:
            out.extend(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{color}"/>' for x, y in zip(xs, ys))
        out.append(f'<text x="{left + 10}" y="{top + 14 + 14 * i}" fill="{color}">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


# the GUI's Gantt colours (ui/plots.py): W, the weight gradient a zero-bubble schedule splits off, apart from B
GANTT_COLORS = {"F": "#4a90d9", "B": "#e8a33d", "W": "#5fb36a"}
GANTT_LABELS = {"F": "forward", "B": "backward", "W": "weight gradient"}


def gantt_chart(timeline: list[dict], title: str, width: int = 760) -> str:
    rows = list(dict.fromkeys(e["device"] for e in timeline))
    left, top, row_h = 90, 30, 22
    height = top + row_h * len(rows) + 40
    end = max((e["end_s"] for e in timeline), default=1.0) or 1.0

    def px(t):
        return left + t / end * (width - left - 20)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 20}" font-family="sans-serif" '
           'font-size="10">',
           f'<rect width="{width}" height="{height + 20}" fill="#ffffff"/>',  # Qt's SVG Tiny reads 100% as 100 px
           f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{escape(title)}</text>']
    for i, dev in enumerate(rows):
        out.append(f'<text x="{left - 6}" y="{top + i * row_h + 15}" text-anchor="end">{escape(dev)}</text>')
    row = {d: i for i, d in enumerate(rows)}
    for e in timeline:
        x0, x1 = px(e["start_s"]), px(e["end_s"])
        color = GANTT_COLORS.get(e["kind"], GANTT_COLORS["B"])
        y = top + row[e["device"]] * row_h
        out.append(f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(x1 - x0, 0.5):.1f}" height="{row_h - 4}" fill="{color}" '
                   f'stroke="#fff" stroke-width="0.5"><title>{e["kind"]}{e["microbatch"]}</title></rect>')
        if x1 - x0 > 18 and len(timeline) <= 400:
            out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{y + 15}" text-anchor="middle" fill="#fff">{e["kind"]}{e["microbatch"]}</text>')
    for v in _ticks(0, end):
        out.append(f'<text x="{px(v):.1f}" y="{height - 12}" text-anchor="middle">{v * 1e3:g} ms</text>')
    kinds = [k for k in GANTT_COLORS if any(e["kind"] == k for e in timeline)]
    for j, k in enumerate(kinds):  # the legend, on its own line under the time axis
        x = left + 190 * j
        out.append(f'<rect x="{x}" y="{height + 4}" width="10" height="10" fill="{GANTT_COLORS[k]}"/>'
                   f'<text x="{x + 14}" y="{height + 13}">{k}: {GANTT_LABELS[k]}'
                   f'{" (input gradient)" if k == "B" and "W" in kinds else ""}</text>')
    out.append("</svg>")
    return "\n".join(out)
