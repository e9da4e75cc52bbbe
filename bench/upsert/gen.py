"""The upsert benchmark's change stream: N changes (default 1,000,000) over K
keys (200,000), 4 partitions (region = the key's id mod 4), JSON lines with
Flink's row kind in "op": a key's first change is +I, later ones +U (about 80 %
of the stream are updates). Deterministic (seed 11).

    gen.py <changes> <keys> <out.jsonl> [chunks]

With chunks > 1 the same stream is also cut into <out>.chunks/<chunks>/NNNNN.jsonl
(one checkpoint each for the read-amplification runs). The final rows (the
last change of each key) go to <out>.final.jsonl.
"""
import json
import random
import sys
from pathlib import Path

REGIONS = ["eu", "us", "ap", "sa"]


def main():
    n, keys, out = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    chunks = [int(c) for c in sys.argv[4:]]
    rng = random.Random(11)
    seen = {}
    lines = []
    for k in range(n):
        i = rng.randrange(keys)
        op = "+U" if i in seen else "+I"
        row = {"id": i, "region": REGIONS[i % 4], "name": f"user-{rng.randrange(1_000_000)}",
               "v": rng.randrange(1 << 40), "ts": 1_700_000_000_000 + k}
        seen[i] = row
        lines.append(json.dumps({"op": op, **row}, separators=(",", ":")) + "\n")
    out.write_text("".join(lines))
    Path(f"{out}.final.jsonl").write_text(
        "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in seen.values()))
    for c in chunks:
        d = Path(f"{out}.chunks/{c}")
        d.mkdir(parents=True, exist_ok=True)
        per = (n + c - 1) // c
        for j in range(c):
            (d / f"{j:05d}.jsonl").write_text("".join(lines[j * per:(j + 1) * per]))
    updates = sum(1 for l in lines if l.startswith('{"op":"+U"'))
    print(json.dumps({"changes": n, "keys": keys, "updates": updates, "final_rows": len(seen)}))


main()
