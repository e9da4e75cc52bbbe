"""JSON lines of ~300-byte web events for the ingest benchmark (deterministic):
    gen_events.py <records> <out.jsonl> [seed]
Fields: event_id (sequential), ts (ISO-8601 with ms and Z, four days), user_id,
session (uuid text), kind, page, referrer, country, device, amount (decimal text),
latency_ms, tags (0-2 strings)."""
import json, random, sys, datetime as dt, uuid
random.seed(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
n = int(sys.argv[1]); out = open(sys.argv[2], "w")
kinds = ["view", "click", "add_to_cart", "purchase"]
countries = ["DE", "FR", "US", "JP", "BR", "IN", "GB", "ES"]
devices = ["mobile", "desktop", "tablet"]
base = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
for i in range(n):
    ts = base + dt.timedelta(seconds=random.randrange(4 * 86400), microseconds=random.randrange(1000000))
    rec = {"event_id": i, "ts": ts.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
           "user_id": random.randrange(1_000_000), "session": str(uuid.UUID(int=random.getrandbits(128), version=4)),
           "kind": random.choice(kinds), "page": f"/products/{random.randrange(100000)}/reviews?page={random.randrange(20)}",
           "referrer": f"https://www.example.com/search?q=item{random.randrange(10000)}", "country": random.choice(countries),
           "device": random.choice(devices), "amount": f"{random.randrange(100000)/100:.2f}",
           "latency_ms": round(random.random() * 500, 3), "tags": random.sample(["new", "sale", "promo", "gift", "eco"], k=random.randrange(3))}
    out.write(json.dumps(rec, separators=(",", ":")) + "\n")
