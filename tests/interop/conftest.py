"""Shared fixtures for the interoperability tests: the floe binary, a fresh
embedded-default directory per test, and PyIceberg / DuckDB handles on it."""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def floe_bin() -> str:
    env = os.environ.get("FLOE_BIN")
    if env:
        return env
    for preset in ("asan", "dev", "release"):
        p = ROOT / "build" / preset / "floe"
        if p.exists():
            return str(p)
    raise RuntimeError("floe binary not found: build it or set FLOE_BIN")


class Floe:
    """Runs the floe command against one embedded-default directory."""

    def __init__(self, root: Path):
        self.root = root
        self.bin = floe_bin()

    def run(self, *args, check=True, input=None):
        cmd = [self.bin, "--dir", str(self.root), *map(str, args)]
        p = subprocess.run(cmd, capture_output=True, text=True, input=input)
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}{p.stdout}")
        return p

    def json_rows(self, *args):
        out = self.run(*args, "--format", "json").stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse"

    def pyiceberg_catalog(self):
        from pyiceberg.catalog.sql import SqlCatalog

        return SqlCatalog(
            "default",
            uri=f"sqlite:///{self.warehouse}/catalog.db",
            warehouse=f"file://{self.warehouse}",
        )


@pytest.fixture
def floe(tmp_path) -> Floe:
    return Floe(tmp_path)


def duckdb_connection():
    import duckdb
    from duckdb_extensions import import_extension

    con = duckdb.connect()
    import_extension("iceberg", con=con)
    con.execute("LOAD iceberg")
    return con
