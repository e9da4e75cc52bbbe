"""The ingest benchmark's results as a Markdown table (best and worst of the runs)."""
import json
import sys
from collections import defaultdict

runs = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[r["side"]].append(r)
print("| side | records/s per core | records/s wall | MB/s per core | CPU s | wall s | peak RSS |")
print("|---|---|---|---|---|---|---|")
for side in ("floe-zstd1", "floe-zstd3", "pyarrow", "pyiceberg"):
    rs = runs.get(side)
    if not rs:
        continue
    cpu = [r["user_s"] + r["sys_s"] for r in rs]
    per_core = [r["records"] / c for r, c in zip(rs, cpu)]
    wall = [r["records"] / r["wall_s"] for r in rs]
    mb = [r["bytes"] / c / 1e6 for r, c in zip(rs, cpu)]
    rss = [r["rss_kb"] / 1024 for r in rs]

    def rng(v, fmt):
        lo, hi = min(v), max(v)
        return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"

    k = lambda v: f"{v / 1000:.0f}K"
    print(f"| {side} | {rng(per_core, k)} | {rng(wall, k)} | {rng(mb, lambda v: f'{v:.0f}')} | "
          f"{rng(cpu, lambda v: f'{v:.2f}')} | {rng([r['wall_s'] for r in rs], lambda v: f'{v:.2f}')} | "
          f"{rng(rss, lambda v: f'{v:.0f} MB')} |")
floe = runs.get("floe-zstd1", [])
pa = runs.get("pyarrow", [])
if floe and pa:
    best = lambda rs: max(r["records"] / (r["user_s"] + r["sys_s"]) for r in rs)
    worst = lambda rs: min(r["records"] / (r["user_s"] + r["sys_s"]) for r in rs)
    print(f"\nfloe / pyarrow records per CPU second at the same zstd level: "
          f"{worst(floe) / best(pa):.1f}x (worst floe run vs best pyarrow run)")
