#!/usr/bin/env python3
"""A Kinesis endpoint for the tests: moto's server (PyPI `moto`), started on
loopback, one request at a time, with three of its resharding shortcuts
replaced by what Kinesis does:

- SplitShard: moto moves the parent's records into the children (with new
  sequence numbers); Kinesis keeps them in the closed parent.
- MergeShards: moto copies both parents' records into the child (so they
  are in the stream twice); Kinesis starts the child empty.
- PutRecord(s): moto routes by hash key to the first shard whose range
  holds it, closed or not; Kinesis writes to open shards only.

Prints "PORT <n>" once it listens. usage: server.py [--port 0]
"""
import argparse
import sys
from collections import OrderedDict

from moto.kinesis import models as km
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server


def split_shard(self, shard_to_split, new_starting_hash_key):
    h = int(new_starting_hash_key)
    shard = self.shards[shard_to_split]
    if not (shard.starting_hash < h < shard.ending_hash) or not shard.is_open:
        raise km.InvalidArgumentError(message=f"cannot split {shard_to_split} at {h}")
    last = max(s._shard_id for s in self.shards.values())
    a = km.Shard(last + 1, shard.starting_hash, h - 1, parent=shard.shard_id)
    b = km.Shard(last + 2, h, shard.ending_hash, parent=shard.shard_id)
    self.shards[a.shard_id] = a
    self.shards[b.shard_id] = b
    shard.is_open = False


def merge_shards(self, shard_to_merge, adjacent_shard_to_merge):
    s1, s2 = self.shards[shard_to_merge], self.shards[adjacent_shard_to_merge]
    if s1.ending_hash + 1 != s2.starting_hash and s2.ending_hash + 1 != s1.starting_hash:
        raise km.InvalidArgumentError(adjacent_shard_to_merge)
    if not (s1.is_open and s2.is_open):
        raise km.InvalidArgumentError(message="a shard to merge is closed")
    last = max(s._shard_id for s in self.shards.values())
    n = km.Shard(last + 1, min(s1.starting_hash, s2.starting_hash),
                 max(s1.ending_hash, s2.ending_hash), parent=s1.shard_id,
                 adjacent_parent=s2.shard_id)
    self.shards[n.shard_id] = n
    s1.is_open = s2.is_open = False


orig_for_key = km.Stream.get_shard_for_key


def get_shard_for_key(self, partition_key, explicit_hash_key):
    if explicit_hash_key:
        k = int(explicit_hash_key)
    else:
        if not isinstance(partition_key, str) or len(partition_key) > 256:
            return orig_for_key(self, partition_key, explicit_hash_key)
        k = int(km.md5_hash(partition_key.encode("utf-8")).hexdigest(), 16)
    for shard in self.shards.values():
        if shard.is_open and shard.starting_hash <= k <= shard.ending_hash:
            return shard
    return None


def max_seq(self):
    return next(reversed(self.records)) if self.records else 0


def min_seq(self):
    return next(iter(self.records)) if self.records else 0


km.Stream.split_shard = split_shard
km.Stream.merge_shards = merge_shards
km.Stream.get_shard_for_key = get_shard_for_key
km.Shard.get_max_sequence_number = max_seq
km.Shard.get_min_sequence_number = min_seq
assert OrderedDict  # records stay in insertion order


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    app = DomainDispatcherApplication(create_backend_app)
    srv = make_server("127.0.0.1", a.port, app, threaded=False)
    print(f"PORT {srv.server_port}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
