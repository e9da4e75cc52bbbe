"""A single-node Ceph cluster with its RADOS Gateway: the tests' S3 server.

Debian's Ceph packages (radosgw, ceph-mon, ceph-osd; scripts/setup installs
them) run as the current user with every file in one directory: one monitor,
one OSD on memstore (objects in the OSD's memory, nothing on disk but the
monitor's store), and radosgw with its beast frontend on 127.0.0.1. The
daemons talk without cephx (auth none, on loopback), but RGW authenticates
every S3 request: a SigV4 (or V2) signature of the key pair made here with
radosgw-admin, SignatureDoesNotMatch otherwise. No system service, no
manager daemon (RGW does not need one), no root-only path.

    python3 tests/interop/rgw_server.py DIR     # start, print the env, run until ^C or SIGTERM

Starting takes a few seconds (most of it RGW creating its pools).
"""
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

ACCESS_KEY = "FLOERGWTESTKEY000001"
SECRET_KEY = "floe-rgw-test-secret/key+0123456789abcd"


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _die_with_parent():
    # a test process killed outright (SIGKILL, a CI timeout) takes its daemons with it
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def available() -> bool:
    return all(shutil.which(b) for b in ("ceph-mon", "ceph-osd", "radosgw", "radosgw-admin",
                                         "monmaptool", "ceph"))


CONF = """\
[global]
fsid = {fsid}
mon host = v2:127.0.0.1:{mon_port}
public addr = 127.0.0.1
ms bind ipv6 = false
# the daemons trust each other (one host, loopback); S3 clients are still authenticated by RGW
auth cluster required = none
auth service required = none
auth client required = none
# without cephx the messenger cannot run its "secure" mode, which daemons ask for by default
ms mon client mode = crc
ms mon service mode = crc
ms mon cluster mode = crc
ms client mode = crc
ms service mode = crc
ms cluster mode = crc
run dir = {d}/run
admin socket = {d}/run/$name.asok
log file = {d}/log/$name.log
pid file = {d}/run/$name.pid
keyring = {d}/keyring
log to stderr = false
err to stderr = false
mon cluster log file = {d}/log/cluster.log
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
# the machine's disk may be fuller than a production monitor would accept
mon data avail warn = 1
mon data avail crit = 0
# commit map changes at once (RGW's start creates its pools one map epoch each)
paxos propose interval = 0.01
paxos min wait = 0.01
mon lease = 1
osd objectstore = memstore
memstore device bytes = {mem_bytes}
osd op num shards = 1
osd op num threads per shard = 2

[mon.a]
mon data = {d}/mon

[osd.0]
osd data = {d}/osd

[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:{rgw_port}
rgw data = {d}/rgw
rgw thread pool size = 64
rgw enable usage log = false
rgw enable ops log = false
# virtual-hosted addressing: Host bucket.localhost (libcurl resolves *.localhost to loopback)
rgw dns name = localhost
# deleted objects' data goes back to the (memory) store soon, not after the default 2 h
rgw gc obj min wait = 30
rgw gc processor period = 30
"""


class RgwServer:
    """A running cluster; .key/.secret are a valid S3 key pair of user "floe"."""

    region = "us-east-1"  # RGW's default zonegroup accepts it in the SigV4 scope

    def __init__(self, directory, mem_bytes=8 << 30, timeout=60):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        for sub in ("mon", "osd", "run", "log", "rgw"):
            (self.dir / sub).mkdir(exist_ok=True)
        self.mon_port, self.port = free_port(), free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.conf = self.dir / "ceph.conf"
        fsid = str(uuid.uuid4())
        self.conf.write_text(CONF.format(fsid=fsid, mon_port=self.mon_port, rgw_port=self.port,
                                         d=self.dir, mem_bytes=mem_bytes))
        self.procs = []
        self.key, self.secret = ACCESS_KEY, SECRET_KEY
        deadline = time.monotonic() + timeout
        try:
            self._run("ceph-authtool", "--create-keyring", self.dir / "keyring", "--gen-key",
                      "-n", "mon.", "--cap", "mon", "allow *", conf=False)
            self._run("monmaptool", "--create", "--fsid", fsid, "--addv", "a",
                      f"[v2:127.0.0.1:{self.mon_port}]", self.dir / "monmap", conf=False)
            self._run("ceph-mon", "--mkfs", "-i", "a", "--monmap", self.dir / "monmap")
            self._daemon("ceph-mon", "-i", "a")
            osd_id = self._run("ceph", "osd", "create", timeout=max(5, deadline - time.monotonic()))
            if osd_id.strip() != "0":
                raise RuntimeError(f"ceph osd create gave {osd_id!r}")
            self._run("ceph-osd", "-i", "0", "--mkfs")
            self._daemon("ceph-osd", "-i", "0")
            self._daemon("radosgw", "-n", "client.rgw")
            self._wait_http(deadline)
            self._run("radosgw-admin", "user", "create", "--uid", "floe", "--display-name", "floe",
                      "--access-key", self.key, "--secret", self.secret)
        except BaseException:
            self.stop()
            raise

    def _run(self, *args, conf=True, timeout=30):
        cmd = [str(a) for a in args]
        if conf:
            cmd[1:1] = ["-c", str(self.conf)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
        return p.stdout

    def _daemon(self, *args):
        cmd = [args[0], "-c", str(self.conf), "-f", *args[1:]]
        log = open(self.dir / "log" / f"{args[0]}.out", "w")
        self.procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent))
        log.close()

    def _wait_http(self, deadline):
        while True:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{p.args[0]} exited ({p.returncode}); see {self.dir}/log")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"radosgw did not listen on {self.port}; see {self.dir}/log")
                time.sleep(0.1)

    def admin(self, *args):
        """radosgw-admin on this cluster; its standard output."""
        return self._run("radosgw-admin", *args)

    def stop(self):
        # the state is thrown away: no orderly shutdown (radosgw alone takes 5 s for one)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.kill()
            p.wait()
        self.procs = []

if __name__ == "__main__":
    import tempfile

    d = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="floe-rgw-")
    for sig in (signal.SIGINT, signal.SIGTERM):  # SIGINT too: a background job ignores it
        signal.signal(sig, lambda *_: sys.exit(0))
    t0 = time.monotonic()
    srv = RgwServer(d)
    print(f"# RGW up in {time.monotonic() - t0:.1f} s, state in {d}")
    print(f"AWS_ENDPOINT_URL_S3={srv.endpoint}\nAWS_ACCESS_KEY_ID={srv.key}\n"
          f"AWS_SECRET_ACCESS_KEY={srv.secret}\nAWS_REGION={srv.region}", flush=True)
    try:
        if os.environ.get("RGW_EXIT"):
            raise KeyboardInterrupt
        while True:
            time.sleep(3600)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        t0 = time.monotonic()
        srv.stop()
        print(f"# stopped in {time.monotonic() - t0:.1f} s")
