"""Rows for bench/upsert/index_build.sh: `gen_keys.py N out base` writes N rows
with ids 0..N-1; `gen_keys.py N out ch K` writes N upsert changes over a base of
K keys (80 % +U of an existing key, 10 % +I of a new key, 10 % -D)."""
import sys, random
n, path = int(sys.argv[1]), sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "base"
rng = random.Random(12)
with open(path, "w") as f:
    if mode == "base":
        for i in range(n):
            f.write(f'{{"id":{i},"name":"n{i % 1000}","v":{i}}}\n')
    else:  # changes over a base of K=int(argv[4]) keys: 80% +U of existing, 10% +I new, 10% -D
        K = int(sys.argv[4])
        nxt = K
        for j in range(n):
            x = rng.random()
            if x < 0.8:
                f.write(f'{{"op":"+U","id":{rng.randrange(K)},"name":"u","v":{j}}}\n')
            elif x < 0.9:
                f.write(f'{{"op":"+I","id":{nxt},"name":"i","v":{j}}}\n'); nxt += 1
            else:
                f.write(f'{{"op":"-D","id":{rng.randrange(K)}}}\n')
