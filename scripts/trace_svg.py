#!/usr/bin/env python3
"""Draws a Chrome trace event JSON written by nax::trace as an SVG timeline: one lane per
thread, one box per complete ("X") event, labelled with its name, coloured by op.

    scripts/trace_svg.py run.json out.svg [--run N]

--run N keeps the events of run N only (each event's args.run); the time axis starts at the
first kept event.
"""
import argparse
import html
import json
import sys

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("svg")
    ap.add_argument("--run", type=int, default=None)
    args = ap.parse_args()
    with open(args.trace) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    boxes = [e for e in events if e.get("ph") == "X" and
             (args.run is None or e.get("args", {}).get("run") == args.run)]
    if not boxes:
        sys.exit("trace_svg: no events to draw")
    t0 = min(e["ts"] for e in boxes)
    t1 = max(e["ts"] + e["dur"] for e in boxes)
    lanes = sorted({e["tid"] for e in boxes})
    ops = sorted({e["name"].split(" #")[0] for e in boxes})
    colour = {op: PALETTE[i % len(PALETTE)] for i, op in enumerate(ops)}
    left, width, lane_h, top = 130, 760, 34, 30
    scale = width / max(t1 - t0, 1e-9)
    height = top + lane_h * len(lanes) + 40
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (left + width + 20, height),
           '<rect width="100%" height="100%" fill="white"/>']
    for i, tid in enumerate(lanes):
        y = top + i * lane_h
        out.append('<text x="6" y="%d">%s</text>' % (y + 20, html.escape(names.get(tid, str(tid)))))
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/>' %
                   (left, y + lane_h - 2, left + width, y + lane_h - 2))
    for e in boxes:
        y = top + lanes.index(e["tid"]) * lane_h
        x = left + (e["ts"] - t0) * scale
        w = max(e["dur"] * scale, 1)
        out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" stroke="white">'
                   '<title>%s: %.1f us</title></rect>' %
                   (x, y + 4, w, lane_h - 10, colour[e["name"].split(" #")[0]],
                    html.escape(e["name"]), e["dur"]))
        if w > 60:
            out.append('<text x="%.1f" y="%d" fill="white">%s</text>' %
                       (x + 4, y + 21, html.escape(e["name"])))
    axis_y = top + lane_h * len(lanes) + 14
    for k in range(6):
        t = (t1 - t0) * k / 5
        x = left + t * scale
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%.0f us</text>' % (x, axis_y, t))
    out.append("</svg>")
    with open(args.svg, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
