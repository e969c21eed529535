#!/usr/bin/env python3
"""Regenerates the benchmark plots (PNG) from the JMH JSON results in a directory.

    python3 benchmarks/plot.py benchmarks/results

Reads RoundTripBench-*.json, StreamBench-*.json, ConnectBench-*.json, ManyConnectionsBench-*.json (JMH -rf json,
one file per transport) and ConnectionTest.json; writes roundtrip-selector.png, roundtrip-blocking.png, stream.png,
and setup.png beside them.
"""
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"tcp": "#555555", "loopback": "#1f77b4", "shm": "#d62728", "disni": "#2ca02c"}


def load(results, group):
    rows = []
    for path in sorted(glob.glob(os.path.join(results, group + "-*.json"))):
        with open(path) as f:
            text = f.read().strip()
        if not text:
            continue
        for r in json.loads(text):
            rows.append(r)
    return rows


def size_label(n):
    n = int(n)
    if n >= 1 << 20:
        return "%d MiB" % (n >> 20)
    if n >= 1 << 10:
        return "%d KiB" % (n >> 10)
    return "%d B" % n


def roundtrip(results, io):
    rows = [r for r in load(results, "RoundTripBench") if r["params"]["io"] == io]
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    transports = sorted({r["params"]["transport"] for r in rows}, key=list(COLORS).index)
    for t in transports:
        pts = sorted((int(r["params"]["size"]), r) for r in rows if r["params"]["transport"] == t)
        xs = [p[0] for p in pts]
        p50 = [p[1]["primaryMetric"]["scorePercentiles"]["50.0"] for p in pts]
        p99 = [p[1]["primaryMetric"]["scorePercentiles"]["99.0"] for p in pts]
        ax.plot(xs, p50, "o-", color=COLORS.get(t), label="%s p50" % t)
        ax.plot(xs, p99, "x--", color=COLORS.get(t), alpha=0.6, label="%s p99" % t)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    sizes = sorted({int(r["params"]["size"]) for r in rows})
    ax.set_xticks(sizes)
    ax.set_xticklabels([size_label(s) for s in sizes])
    ax.set_xlabel("message size")
    ax.set_ylabel("round trip (us)")
    ax.set_title("Round trip, %s-driven NIO client, echo server" % io)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(results, "roundtrip-%s.png" % io), dpi=100)
    plt.close(fig)


def stream(results):
    rows = load(results, "StreamBench")
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    transports = sorted({r["params"]["transport"] for r in rows}, key=list(COLORS).index)
    sizes = sorted({int(r["params"]["size"]) for r in rows})
    width = 0.8 / len(transports)
    for i, t in enumerate(transports):
        by = {int(r["params"]["size"]): r["primaryMetric"]["score"] * int(r["params"]["size"]) / 1e6
              for r in rows if r["params"]["transport"] == t}
        xs = [j + i * width for j in range(len(sizes))]
        ax.bar(xs, [by.get(s, 0) for s in sizes], width, color=COLORS.get(t), label=t)
    ax.set_xticks([j + width * (len(transports) - 1) / 2 for j in range(len(sizes))])
    ax.set_xticklabels([size_label(s) for s in sizes])
    ax.set_xlabel("bytes per write")
    ax.set_ylabel("MB/s")
    ax.set_title("One-way stream between two processes (loopback: one process)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(results, "stream.png"), dpi=100)
    plt.close(fig)


def setup(results):
    connect = load(results, "ConnectBench")
    many = load(results, "ManyConnectionsBench")
    conn_test = None
    path = os.path.join(results, "ConnectionTest.json")
    if os.path.exists(path):
        with open(path) as f:
            conn_test = json.load(f)
    panels = [p for p in (connect, many, conn_test) if p]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 4))
    if len(panels) == 1:
        axes = [axes]
    k = 0
    for rows, title in ((connect, "connect + accept + close (us, mean)"),
                        (many, "ping 1,000 connections, one selector (us, mean)")):
        if not rows:
            continue
        ts = [r["params"]["transport"] for r in rows]
        axes[k].bar(ts, [r["primaryMetric"]["score"] for r in rows], color=[COLORS.get(t) for t in ts])
        axes[k].set_title(title, fontsize=9)
        k += 1
    if conn_test:
        rs = [r for r in conn_test["results"] if not r["skipped"]]
        ts = [r["transport"] for r in rs]
        axes[k].bar(ts, [r["roundTripsPerSecond"] for r in rs], color=[COLORS.get(t) for t in ts])
        axes[k].set_title("connection test: round trips/s (%d s, errors: %s)"
                          % (conn_test["seconds"], ", ".join(str(r["errors"]) for r in rs)), fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(results, "setup.png"), dpi=100)
    plt.close(fig)


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results"
    roundtrip(results, "selector")
    roundtrip(results, "blocking")
    stream(results)
    setup(results)
    print("plots written to %s" % results)


if __name__ == "__main__":
    main()
