"""The plots of a `make bench` result (tools/testing/bench/perf.py's JSON
document), written as PNG next to the JSON with Debian's
python3-matplotlib:

- PREFIX-bw.png: per MTU and program, bandwidth (median, 1 QP) against
  message size for each RDMA driver, TCP's variants as horizontal lines.
- PREFIX-lat.png: per MTU, typical latency bars per program and size for
  each driver, with a whisker up to the p99.
"""
import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"sroce": "tab:blue", "rxe": "tab:orange", "sroce-routed": "tab:purple"}
TCP_STYLES = {"tcp": "-", "tcp eq-payload": "--", "tcp -P 4": ":"}


def _entries(doc, **fields):
    return [e for e in doc["summary"]
            if all(e.get(k) == v for k, v in fields.items())]


def _drivers(doc):
    return [d for d in doc["args"]["entities"] if d != "tcp"]


def bandwidth(doc, path):
    mtus = sorted({e["mtu"] for e in _entries(doc, kind="bw")})
    programs = sorted({e["program"] for e in _entries(doc, kind="bw", lossy=False)
                       if not e["program"].startswith("tcp")})
    if not mtus or not programs:
        return None
    fig, axes = plt.subplots(len(mtus), len(programs), squeeze=False,
                             figsize=(4.5 * len(programs), 3.6 * len(mtus)))
    for i, mtu in enumerate(mtus):
        for j, prog in enumerate(programs):
            ax = axes[i][j]
            rows = sorted(_entries(doc, kind="bw", program=prog, mtu=mtu, qps=1, lossy=False),
                          key=lambda e: e["size"])
            for d in _drivers(doc):
                pts = [(e["size"], e["median"].get(d)) for e in rows
                       if e["median"].get(d) is not None]
                if pts:
                    ax.plot(*zip(*pts), marker="o", color=COLOURS.get(d), label=d)
            for name, style in TCP_STYLES.items():
                for e in _entries(doc, kind="bw", program=name, mtu=mtu):
                    v = e["median"].get("tcp")
                    if v is not None:
                        ax.axhline(v, color="tab:green", linestyle=style, label=name)
            ax.set_xscale("log", base=2)
            ax.set_title(f"{prog}, MTU {mtu}")
            ax.set_xlabel("message size, bytes")
            ax.set_ylabel("MB/s (median)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small")
    fig.suptitle(f"make bench {doc['time']}: bandwidth, 1 QP")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def latency(doc, path):
    typ = _entries(doc, kind="lat", stat="typical")
    mtus = sorted({e["mtu"] for e in typ})
    drivers = _drivers(doc)
    if not typ or not drivers:
        return None
    fig, axes = plt.subplots(1, len(mtus), squeeze=False, figsize=(7 * len(mtus), 4))
    width = 0.8 / len(drivers)
    for i, mtu in enumerate(mtus):
        ax = axes[0][i]
        groups = [e for e in typ if e["mtu"] == mtu]
        for k, d in enumerate(drivers):
            xs, ys, up = [], [], []
            for n, e in enumerate(groups):
                t = e["median"].get(d)
                p99 = next((x["median"].get(d) for x in _entries(
                    doc, kind="lat", stat="p99", program=e["program"], size=e["size"], mtu=mtu)),
                    None)
                if t is None:
                    continue
                xs.append(n + k * width)
                ys.append(t)
                up.append(max(0.0, (p99 or t) - t))
            ax.bar(xs, ys, width, yerr=[[0] * len(up), up], capsize=3,
                   color=COLOURS.get(d), label=f"{d} (whisker: p99)")
        ax.set_xticks([n + width * (len(drivers) - 1) / 2 for n in range(len(groups))])
        ax.set_xticklabels([f"{e['program'][3:]}\n{e['size']} B" for e in groups],
                           fontsize="small")
        ax.set_ylabel("typical latency, us (median)")
        ax.set_title(f"latency, MTU {mtu}")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def write(doc, prefix):
    """Write the plots of doc as PREFIX-bw.png and PREFIX-lat.png; return
    the paths written."""
    out = [bandwidth(doc, prefix + "-bw.png"), latency(doc, prefix + "-lat.png")]
    return [p for p in out if p]
