"""Every query/answer pair of ../shared/testdata/*/EXPECTED_RESULTS.md that floe
can express runs through `floe scan` and must give the engines' answer.

The pairs (Impala 340, DuckDB 134, GlareDB's prose table and Impala's "other
expectations") are parsed from the files as data. Each pair's SQL is
translated into floe scan options when it has a shape floe supports:

    SELECT * | count(*) | col, a.b, ...   FROM <table> [alias]
      [FOR SYSTEM_VERSION AS OF id | FOR SYSTEM_TIME AS OF 'ts']
      [WHERE <filter floe parses>] [ORDER BY ...] [LIMIT n]

(DuckDB: ICEBERG_SCAN('path', version=..., snapshot_from_id=...) and views
over it; Impala: the table of the section, its "Data dir"). Tables are opened
by path with relocation rules (INVENTORY.md section 2): the recorded table
location -> the copied directory, plus the Impala/DuckDB prefixes.

A pair floe scan cannot express (aggregates, joins, computed selects,
functions in filters, subqueries) runs through `floe sql --format json` as
written, its tables referred to by path (FROM '/path/to/table').

Results are compared as the engines print them (Impala text with column
types; DuckDB tab-separated), as sorted multisets unless the query orders and
limits (then the harness applies the ORDER BY to floe's rows: floe does not
sort). A pair that cannot be translated, or that floe does not pass, must be
listed in scan_expected_skips.tsv with the reason; a listed pair that passes
fails the test until it is removed, so the list only shrinks.
"""
import base64
import datetime as dt
import decimal
import gzip
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import ROOT, floe_bin

TESTDATA = Path(os.environ.get("FLOE_TESTDATA") or (ROOT.parent / "shared" / "testdata"))
if not (TESTDATA / "INVENTORY.md").exists():
    TESTDATA = Path("/work/shared/testdata")
IMPALA = TESTDATA / "impala" / "testdata" / "data" / "iceberg_test"
DUCKDB = TESTDATA / "duckdb-iceberg"
GLAREDB = TESTDATA / "glaredb" / "testdata"
SKIPS_FILE = Path(__file__).with_name("scan_expected_skips.tsv")


# ---- the pairs ------------------------------------------------------------------------------


@dataclass
class Case:
    id: str
    source: str  # impala | duckdb | glaredb
    sql: str = ""
    setup: list = field(default_factory=list)
    expected: list = field(default_factory=list)  # text lines
    types: list = None  # Impala column types
    ordered: bool = False
    expect_error: bool = False
    data_dir: str = None  # Impala section's table dir (relative to TESTDATA)
    section: str = ""
    views: dict = field(default_factory=dict)  # DuckDB: view name -> ICEBERG_SCAN(...) text
    manual: dict = None  # hand-made cases: table, opts, expected count/rows


def _blocks(text):
    """(kind, body) for ```sql / ``` fenced blocks, with the lines between."""
    return re.finditer(r"```(sql)?\n(.*?)```", text, re.S)


def impala_cases():
    text = (TESTDATA / "impala" / "EXPECTED_RESULTS.md").read_text()
    text = text.split("## Other expectations")[0]
    cases = []
    for sec in re.split(r"\n## ", text)[1:]:
        name = sec.split("\n", 1)[0].strip()
        m = re.search(r"Data dir: `([^`]+)`", sec)
        data_dir = m.group(1) if m else None
        k = 0
        for pm in re.finditer(
            r"- from `[^`]+` \(([^)]*)\)\n```sql\n(.*?)```\n  expected \(Impala text format; types: ([^)]*)\):\n```\n(.*?)```",
            sec,
            re.S,
        ):
            order, sql, types, rows = pm.groups()
            cases.append(
                Case(
                    id=f"impala/{name}#{k}",
                    source="impala",
                    sql=sql,
                    expected=[r for r in rows.split("\n") if r != "" and r != "(no rows)"],
                    types=[t.strip().upper() for t in types.split(",")],
                    ordered="row order matters" in order,
                    data_dir=data_dir if "," not in name else None,
                    section=name,
                )
            )
            k += 1
    return cases


def duckdb_cases():
    text = (DUCKDB / "EXPECTED_RESULTS.md").read_text()
    cases = []
    for sec in re.split(r"\n### ", text)[1:]:
        name = sec.split("\n", 1)[0].strip().replace("test/sql/local/", "")
        setup, views = [], {}
        k = 0
        pos = 0
        items = re.finditer(
            r"- setup: `(?P<setup>[^`]*)`|- (?P<kind>query[^:\n]*|\*\*expect error\*\*):\n```sql\n(?P<sql>.*?)```\n(?:  expected \(tab-separated, (?P<cols>[A-Z]*)\):\n```\n(?P<rows>.*?)```|  message: `(?P<msg>[^`]*)`)?",
            sec,
            re.S,
        )
        for it in items:
            if it.group("setup") is not None:
                s = it.group("setup")
                setup.append(s)
                vm = re.match(r"create view (\S+) as select \* from (ICEBERG_SCAN\(.*\))\s*;?$", s, re.I)
                if vm:
                    views[vm.group(1).lower()] = vm.group(2)
                continue
            kind = it.group("kind")
            rows = it.group("rows")
            cases.append(
                Case(
                    id=f"duckdb/{name}#{k}",
                    source="duckdb",
                    sql=it.group("sql"),
                    setup=list(setup),
                    expected=[r for r in (rows or "").split("\n") if r != "" and r != "(no rows)"],
                    expect_error=kind.startswith("**expect error"),
                    views=dict(views),
                    section=name,
                )
            )
            k += 1
    return cases


def manual_cases():
    """Pairs stated in prose: GlareDB's table and Impala's 'other expectations'."""
    g = "glaredb/testdata/iceberg"
    cases = []
    for v in ("1", "2"):
        for t, n in (("lineitem_simple", 1000), ("lineitem_partitioned", 1000), ("lineitem_versioned", 2000)):
            cases.append(Case(id=f"glaredb/tables-v{v}/{t}#count", source="glaredb",
                              manual={"table": f"{g}/tables-v{v}/{t}", "count": n}))
        cases.append(Case(id=f"glaredb/tables-v{v}/lineitem_versioned#first-snapshot", source="glaredb",
                          manual={"table": f"{g}/tables-v{v}/lineitem_versioned", "count": 1000, "first_snapshot": True}))
    cases.append(Case(id="glaredb/wh/default.db/cities#count", source="glaredb",
                      manual={"table": f"{g}/wh/default.db/cities", "count": 4}))
    ice = "impala/testdata/data/iceberg_test/hadoop_catalog/ice"
    cases += [
        Case(id="impala-other/iceberg_v2_null_delete_record#count", source="impala",
             manual={"table": f"{ice}/iceberg_v2_null_delete_record", "count": 6}),
        Case(id="impala-other/iceberg_v2_null_delete_record#j<3", source="impala",
             manual={"table": f"{ice}/iceberg_v2_null_delete_record", "where": "j < 3", "rows": [[1, 1], [2, 2]]}),
        Case(id="impala-other/iceberg_v2_delete_equality_partition_evolution#all", source="impala",
             manual={"table": f"{ice}/iceberg_v2_delete_equality_partition_evolution",
                     "columns": "i,s,d", "rows": [[2, "str2", "2023-12-24"], [111, "str1", "2023-12-24"]]}),
        # the two iceberg_v2_delete_equality_nulls pairs without Impala's
        # ICEBERG__DATA__SEQUENCE__NUMBER column: a NULL equality key deletes the
        # NULL row of a lower sequence number and keeps the later one
        Case(id="impala-other/iceberg_v2_delete_equality_nulls#current", source="impala",
             manual={"table": f"{ice}/iceberg_v2_delete_equality_nulls",
                     "rows": [[1, "str1"], [4, "str4"], [None, "str5"]]}),
        Case(id="impala-other/iceberg_v2_delete_equality_nulls#first", source="impala",
             manual={"table": f"{ice}/iceberg_v2_delete_equality_nulls", "snapshot_id": 4346796256488077976,
                     "rows": [[1, "str1"], [None, "str2"], [3, "str3"]]}),
        Case(id="impala-other/iceberg_with_key_metadata#all", source="impala",
             manual={"table": f"{ice}/iceberg_with_key_metadata", "rows": [[1, "x"], [2, "y"], [3, "z"]]}),
        Case(id="impala-other/iceberg_mixed_file_format_test#all", source="impala",
             manual={"table": "impala/testdata/data/iceberg_test/iceberg_mixed_file_format_test",
                     "rows": [[1, "A", 0.5], [2, "B", 1.5], [3, "C", 2.5], [4, "D", 3.5]]}),
        Case(id="impala-other/iceberg_v3_deletion_vectors#current", source="impala",
             manual={"table": "impala/testdata/data/iceberg_test/iceberg_v3/iceberg_v3_deletion_vectors",
                     "rows": [[1], [3], [5]]}),
    ]
    return cases


ALL = impala_cases() + duckdb_cases() + manual_cases()


def load_skips():
    skips = {}
    if SKIPS_FILE.exists():
        for line in SKIPS_FILE.read_text().splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            cid, reason = line.split("\t", 1)
            skips[cid] = reason
    return skips


SKIPS = load_skips()


class Unsupported(Exception):
    pass


# ---- tables and relocation -------------------------------------------------------------------


def read_metadata(path: Path):
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def newest_metadata(table_dir: Path):
    files = sorted((table_dir / "metadata").glob("*.metadata.json*"), key=lambda p: p.stat().st_mtime)
    best = None
    for f in files:
        try:
            m = read_metadata(f)
        except Exception:
            continue
        if best is None or m.get("last-updated-ms", 0) >= best[1].get("last-updated-ms", 0):
            best = (f, m)
    return best


def table_rules(table_dir: Path, meta_file: Path = None):
    """Relocation rules for a copied table: its recorded location first."""
    rules = []
    found = (meta_file, read_metadata(meta_file)) if meta_file else newest_metadata(table_dir)
    if found:
        loc = found[1].get("location", "")
        if loc:
            variants = {loc}
            if loc.startswith("/"):
                variants.add("hdfs://localhost:20500" + loc)
            if loc.startswith("./"):
                variants.add(loc[2:])
            if loc.startswith("file://"):
                variants.add(loc[7:])
            # Trino's table directory with a uuid suffix
            variants |= {re.sub(r"-[0-9a-f]{16,}$", "", v) for v in set(variants)}
            for v in sorted(variants, key=len, reverse=True):
                rules.append(f"{v.rstrip('/')}={table_dir}")
    rules += [
        f"/test-warehouse/iceberg_test/={IMPALA}/",
        f"hdfs://localhost:20500/test-warehouse/iceberg_test/={IMPALA}/",
        f"/test-warehouse/={IMPALA}/",
        f"hdfs://localhost:20500/test-warehouse/={IMPALA}/iceberg_v3/",
        f"data/persistent/={DUCKDB}/data/persistent/",
        f"file://data/persistent/={DUCKDB}/data/persistent/",
        f"./iceberg/={GLAREDB}/iceberg/",
        f"iceberg/={GLAREDB}/iceberg/",
        f"file://wh/={GLAREDB}/iceberg/wh/",
    ]
    return rules


def run_floe(args, cwd):
    p = subprocess.run([floe_bin(), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    return p


# ---- SQL translation -----------------------------------------------------------------------------


@dataclass
class Plan:
    table: Path
    meta_file: Path = None
    columns: list = None  # None = *
    count: bool = False
    where: str = None
    snapshot_id: int = None
    as_of: str = None
    order: list = None  # [(column, desc)] or ["ALL"]
    limit: int = None
    offset: int = 0
    ignore_case: bool = False
    tz: str = None
    first_snapshot: bool = False
    tz_keys: set = None  # floe sql's JSON keys of TIMESTAMPTZ columns, over several tables


def split_top(s, sep=","):
    out, depth, cur, q = [], 0, "", None
    for ch in s:
        if q:
            cur += ch
            if ch == q:
                q = None
            continue
        if ch in "'\"":
            q = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [x.strip() for x in out]


KEYWORDS = r"(?:where|order\s+by|limit|offset)"


def clean_sql(sql):
    lines = []
    for line in sql.splitlines():
        s = line.strip()
        if not s or s.startswith("--") or s.startswith("#"):
            continue
        lines.append(line)
    return " ".join(" ".join(lines).split()).rstrip(";").strip()


def translate_where(where, source, alias):
    w = where
    if alias:
        w = re.sub(rf"\b{re.escape(alias)}\.", "", w)
    # Impala: to_timestamp('x', 'fmt') -> TIMESTAMP 'x'
    w = re.sub(r"to_timestamp\('([^']*)'\s*,\s*'[^']*'\)", r"TIMESTAMP '\1'", w, flags=re.I)
    if source == "impala":
        # Impala: double-quoted text is a string literal
        w = re.sub(r'"([^"]*)"', lambda m: "'" + m.group(1).replace("'", "''") + "'", w)
    # DuckDB: '\xAA\xBB'::BLOB -> X'AABB', 'x'::TYPE -> TYPE 'x'
    def blob(m):
        parts = re.findall(r"\\x([0-9A-Fa-f]{2})", m.group(1))
        return "X'" + "".join(parts) + "'"
    w = re.sub(r"'((?:\\x[0-9A-Fa-f]{2})+)'::BLOB", blob, w, flags=re.I)
    w = re.sub(r"'([^']*)'::(DATE|TIMESTAMP|TIMESTAMPTZ)", r"\2 '\1'", w, flags=re.I)
    bare = re.sub(r"'[^']*'", "''", w)
    if re.search(r"(?i)\bselect\b", bare):
        raise Unsupported("subquery in the filter")
    if "::" in bare or re.search(r"\b(similar|ilike|regexp|case)\b|[%+*/\[]|\brand\(", bare, re.I):
        raise Unsupported(f"filter uses SQL floe's filters lack: {where}")
    return w


def parse_from(frm, case):
    """-> (table dir, metadata file or None, alias, opts dict)"""
    opts = {}
    m = re.match(r"(?i)iceberg_scan\s*\((.*)\)\s*(\w+)?$", frm)
    if m:
        args = split_top(m.group(1))
        path = args[0].strip("'\"")
        for a in args[1:]:
            k, _, v = a.partition("=")
            k, v = k.strip().lower(), v.strip().strip("'\"")
            if k == "version" and v != "?":
                opts["version"] = v
            elif k == "snapshot_from_id":
                opts["snapshot_id"] = int(v)
            elif k in ("allow_moved_paths", "metadata_compression_codec"):
                pass
            elif k == "version_name_format":
                opts["version_name_format"] = v
            else:
                raise Unsupported(f"iceberg_scan argument {k}")
        p = DUCKDB / path
        if path.endswith(".json"):
            return p.parent.parent, p, m.group(2), opts
        meta = None
        if "version" in opts:
            fmt = opts.get("version_name_format")
            names = [f"v{opts['version']}.metadata.json", f"{opts['version']}.metadata.json", opts["version"]]
            if fmt:
                names.insert(0, fmt.replace("%s%s", opts["version"] + "%s", 1).replace("%s", ".metadata.json" if "%s" in fmt else ""))
            for n in names:
                if (p / "metadata" / n).exists():
                    meta = p / "metadata" / n
                    break
            if meta is None:
                raise Unsupported(f"version {opts['version']} not found")
        return p, meta, m.group(2), opts
    toks = frm.split()
    name = toks[0].lower()
    alias = None
    rest = toks[1:]
    if rest and rest[0].lower() not in ("for",):
        alias = rest[0]
        rest = rest[1:]
    tt = " ".join(rest)
    if tt:
        m = re.match(r"(?i)for system_version as of (\d+)$", tt)
        m2 = re.match(r"(?i)for system_time as of '([^']+)'$", tt)
        if m:
            opts["snapshot_id"] = int(m.group(1))
        elif m2:
            opts["as_of"] = m2.group(1)
        else:
            raise Unsupported(f"FROM clause: {frm}")
    if case.source == "duckdb":
        if name in case.views:
            t, meta, _, vopts = parse_from(case.views[name], case)
            vopts.update(opts)
            return t, meta, alias, vopts
        raise Unsupported(f"table {name}")
    if not case.data_dir:
        raise Unsupported("query reads several tables")
    return TESTDATA / case.data_dir, None, alias, opts


def translate(case) -> Plan:
    if case.manual:
        mm = case.manual
        return Plan(table=TESTDATA / mm["table"], where=mm.get("where"),
                    columns=mm["columns"].split(",") if mm.get("columns") else None,
                    count="count" in mm, first_snapshot=mm.get("first_snapshot", False),
                    snapshot_id=mm.get("snapshot_id"))
    tz = None
    stmts = [s for s in split_top(case.sql, ";") if s.strip()]
    body = None
    for s in stmts:
        c = clean_sql(s)
        if not c:
            continue
        m = re.match(r"(?i)set\s+(\w+)\s*=\s*'?([^']*)'?$", c)
        if m:
            if m.group(1).lower() == "timezone":
                tz = m.group(2)
            continue
        if body is not None:
            raise Unsupported("several statements")
        body = c
    if body is None:
        raise Unsupported("no query")
    if re.match(r"(?i)from\s", body):
        body = "SELECT * " + body
    exclude = None
    m = re.match(r"(?is)(select\s+)\*\s+exclude\s*\(([^)]*)\)(.*)$", body)
    if m:
        exclude = [x.strip().strip('"').lower() for x in m.group(2).split(",")]
        body = m.group(1) + "*" + m.group(3)
    body = re.sub(r"\bis\s+(not\s+)?distinct\s+from\b", lambda mm: f"IS {mm.group(1) or ''}DISTINCT_FROM", body, flags=re.I)
    if re.search(r"(?i)\b(join|group\s+by|union|having|over\s*\(|distinct|describe)\b", body):
        raise Unsupported("SQL beyond a single-table select")
    m = re.match(rf"(?is)select\s+(.+?)\s+from\s+(.+?)(?:\s+where\s+(.+?))?(?:\s+order\s+by\s+(.+?))?(?:\s+limit\s+(\d+))?(?:\s+offset\s+(\d+))?$", body)
    if not m:
        raise Unsupported("query shape")
    cols, frm, where, order, limit, offset = m.groups()
    if re.search(r"(?i)iceberg_(metadata|column_stats|partition_stats)\s*\(", frm):
        raise Unsupported("DuckDB metadata functions")
    if "," in frm and not re.match(r"(?i)iceberg_scan", frm.strip()):
        raise Unsupported("several tables (join or nested collection)")
    table, meta, alias, fopts = parse_from(frm.strip(), case)
    plan = Plan(table=table, meta_file=meta, tz=tz, snapshot_id=fopts.get("snapshot_id"),
                as_of=fopts.get("as_of"), ignore_case=case.source == "impala")
    c = cols.strip()
    if re.fullmatch(r"(?i)count\(\s*(\*|1)\s*\)", c):
        plan.count = True
    elif c != "*":
        out = []
        for x in split_top(c):
            x = x.strip()
            if alias and x.startswith(alias + "."):
                x = x[len(alias) + 1:]
            if x[:1] in ('"', "`") and x[-1:] == x[:1]:
                x = x[1:-1]
            if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", x):
                raise Unsupported(f"select expression {x}")
            # Impala's row-lineage columns (the values the file stores) read as
            # Iceberg's _row_id / _last_updated_sequence_number: equal wherever
            # the file stores them; where it does not, Iceberg inherits values
            # and Impala shows NULL (listed in the skip file)
            x = {"_file_row_id": "_row_id",
                 "_file_last_updated_sequence_number": "_last_updated_sequence_number"}.get(x.lower(), x)
            out.append(x)
        plan.columns = out
    if exclude:
        plan.columns = [f["name"] for f in table_schema(plan)["fields"] if f["name"].lower() not in exclude]
    if where:
        plan.where = translate_where(where.replace("DISTINCT_FROM", "DISTINCT FROM"), case.source, alias)
    if order:
        plan.order = []
        for o in split_top(order):
            toks = o.split()
            col = toks[0]
            if alias and col.startswith(alias + "."):
                col = col[len(alias) + 1:]
            plan.order.append((col.lower(), len(toks) > 1 and toks[1].lower() == "desc"))
    if limit:
        plan.limit = int(limit)
        if plan.count:
            raise Unsupported("count with limit")
    if offset:
        plan.offset = int(offset)
    if tz and tz.upper() != "UTC":
        tzcols = timestamptz_columns(plan)
        if tzcols:
            # Impala shows and reads TIMESTAMPTZ in the session zone: literals
            # become UTC instants, results are shown in the zone (compare())
            plan.tz = tz
            if plan.where:
                plan.where = tz_literals(plan.where, tz)
        else:
            plan.tz = None  # TIMESTAMP (no zone) is not affected by the session zone
    return plan


def table_schema(plan):
    found = (plan.meta_file, read_metadata(plan.meta_file)) if plan.meta_file else newest_metadata(plan.table)
    m = found[1]
    if "schemas" in m:
        return next(sc for sc in m["schemas"] if sc.get("schema-id") == m.get("current-schema-id", 0))
    return m["schema"]


def timestamptz_columns(plan):
    return {f["name"].lower() for f in table_schema(plan)["fields"] if f["type"] in ("timestamptz", "timestamptz_ns")}


TS_LIT = r"'(\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)'"


def tz_literals(where, tz):
    """Impala compares TIMESTAMPTZ in the session zone: a local time that
    occurs twice (DST end) stands for both instants."""
    def between(m):
        return f"BETWEEN '{local_to_utc(m.group(1), tz, 0)}' AND '{local_to_utc(m.group(2), tz, 1)}'"

    where = re.sub(rf"(?i)between\s+{TS_LIT}\s+and\s+{TS_LIT}", between, where)

    def cmp(m):
        op, lit = m.group(1), m.group(2)
        a, b = local_to_utc(lit, tz, 0), local_to_utc(lit, tz, 1)
        if op == "=" and a != b:
            return f"IN ('{a}', '{b}')"
        return f"{op} '{b if op in ('<=', '>') else a}'"

    return re.sub(rf"(<=|>=|<>|!=|=|<|>)\s*{TS_LIT}", cmp, where)


def local_to_utc(text, tz, fold=0):
    from zoneinfo import ZoneInfo

    d = parse_ts_text(text).replace(tzinfo=ZoneInfo(tz), fold=fold)
    return d.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00"


# ---- running ------------------------------------------------------------------------------------


def floe_args(plan: Plan, case):
    meta = plan.meta_file
    target = str(meta) if meta else str(plan.table)
    args = ["scan", target]
    for r in table_rules(plan.table, meta):
        args += ["--path-map", r]
    if plan.where:
        args += ["--where", plan.where]
    if plan.columns:
        args += ["--columns", ",".join(plan.columns)]
    if plan.snapshot_id is not None:
        args += ["--snapshot-id", plan.snapshot_id]
    if plan.as_of:
        args += ["--as-of", plan.as_of.replace(" ", "T")]
    if plan.ignore_case:
        args.append("--ignore-case")
    if plan.first_snapshot:
        found = (meta, read_metadata(meta)) if meta else newest_metadata(plan.table)
        snaps = sorted(found[1]["snapshots"], key=lambda s: s["timestamp-ms"])
        args += ["--snapshot-id", snaps[0]["snapshot-id"]]
    if plan.count:
        args.append("--count")
    else:
        args += ["--format", "json"]
        if plan.limit is not None and not plan.order:
            args += ["--limit", plan.limit + plan.offset]
    return args


def cwd_for(case):
    return DUCKDB if case.source == "duckdb" else TESTDATA


# ---- comparing ----------------------------------------------------------------------------------


def floe_ts(v):
    """floe's ISO text -> aware datetime (UTC when it has no zone)."""
    s = v.replace("+00:00", "")
    frac = ""
    if "." in s:
        s, frac = s.split(".")
    d = dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S")
    us = int((frac + "000000")[:6]) if frac else 0
    return d.replace(microsecond=us)


def parse_ts_text(s):
    s = s.strip().replace("T", " ")
    s = re.sub(r"([+-]\d\d)(:?\d\d)?$", "", s) if re.search(r"\d[+-]\d\d(:?\d\d)?$", s) else s
    frac = ""
    if "." in s:
        s, frac = s.split(".")
    fmt = "%Y-%m-%d %H:%M:%S" if ":" in s else "%Y-%m-%d"
    d = dt.datetime.strptime(s, fmt)
    us = int((frac + "000000")[:6]) if frac else 0
    return d.replace(microsecond=us)


def impala_split(row):
    out, cur, q = [], "", False
    i = 0
    while i < len(row):
        ch = row[i]
        if q:
            if ch == "'":
                if i + 1 < len(row) and row[i + 1] == "'":
                    cur += "''"
                    i += 2
                    continue
                q = False
            cur += ch
        elif ch == "'":
            q = True
            cur += ch
        elif ch == ",":
            out.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    out.append(cur)
    return out


def impala_cell(text, typ):
    """canonical value of an Impala text cell"""
    t = typ.upper()
    if text == "NULL":
        return None
    if t.startswith(("STRING", "VARCHAR", "CHAR", "BINARY")):
        if text.startswith("'") and text.endswith("'"):
            s = text[1:-1].replace("''", "'")
            s = s.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in s else s
            return None if s == "NULL" else s
        return text
    if t in ("INT", "BIGINT", "SMALLINT", "TINYINT"):
        return int(text)
    if t in ("FLOAT", "DOUBLE", "REAL"):
        return float(text)
    if t.startswith("DECIMAL"):
        return decimal.Decimal(text)
    if t == "BOOLEAN":
        return text.lower() == "true"
    if t == "TIMESTAMP":
        return parse_ts_text(text)
    if t == "DATE":
        return text
    return text


def floe_cell_impala(v, typ):
    t = typ.upper()
    if v is None:
        return None
    if t.startswith("DECIMAL"):
        return decimal.Decimal(str(v))
    if t in ("FLOAT", "DOUBLE", "REAL"):
        return float(v)
    if t == "TIMESTAMP":
        return floe_ts(v)
    if t.startswith("BINARY"):
        return base64.b64decode(v).decode("utf-8", "replace")
    if isinstance(v, bool):
        return v
    if t.startswith(("STRING", "VARCHAR", "CHAR")) and v == "NULL":
        return None  # Impala prints a NULL string as 'NULL'
    return v


def duck_text(v):
    """floe JSON value -> DuckDB's text rendering"""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if isinstance(v, float) else str(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"'{k}': {duck_text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        if v and all(isinstance(x, list) and len(x) == 2 for x in v):
            return "{" + ", ".join(f"{duck_text(k)}={duck_text(x)}" for k, x in v) + "}"
        return "[" + ", ".join(duck_text(x) for x in v) + "]"
    s = str(v)
    if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00)?", s):
        s = s.replace("T", " ").replace("+00:00", "+00")
    return s


def duck_blob(raw):
    return "".join(chr(c) if 32 <= c < 127 and c != 92 else f"\\x{c:02X}" for c in raw)


def ts_instant(s):
    """an engine's timestamp text (optionally with a +HH offset) -> UTC datetime"""
    m = re.fullmatch(r"(\d{4,}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)(?:([+-])(\d\d)(?::?(\d\d))?)?", s.strip())
    if not m:
        return None
    d = parse_ts_text(m.group(1))
    if m.group(2):
        off = dt.timedelta(hours=int(m.group(3)), minutes=int(m.group(4) or 0))
        d = d - off if m.group(2) == "+" else d + off
    return d


def float32_repr(x):
    """the shortest text that reads back to the same float32 (what DuckDB prints)"""
    import struct

    if x != x or x in (float("inf"), float("-inf")):
        return repr(x)
    bits = struct.pack("<f", x)
    for p in range(1, 10):
        t = f"{x:.{p}g}"
        if struct.pack("<f", float(t)) == bits:
            if "e" not in t and "." not in t:
                t += ".0"
            return t
    return repr(x)


def duck_typed(v, t, zone, nested=False):
    """floe JSON value of Iceberg type t (schema JSON) as DuckDB prints it."""
    if t is None:
        return duck_text(v)
    if v is None:
        return "NULL"
    if isinstance(t, dict):
        if t.get("type") == "struct":
            return "{" + ", ".join(f"'{f['name']}': {duck_typed(v.get(f['name']), f['type'], zone, True)}" for f in t["fields"]) + "}"
        if t.get("type") == "list":
            return "[" + ", ".join(duck_typed(x, t["element"], zone, True) for x in v) + "]"
        if t.get("type") == "map":
            return "{" + ", ".join(f"{duck_typed(k, t['key'], zone, True)}={duck_typed(x, t['value'], zone, True)}" for k, x in v) + "}"
        return duck_text(v)
    if t == "float":
        text = float32_repr(float(v))
    elif t == "double":
        text = repr(float(v))
    elif t in ("timestamp", "timestamp_ns"):
        text = v.replace("T", " ")
    elif t in ("timestamptz", "timestamptz_ns"):
        from zoneinfo import ZoneInfo

        d = floe_ts(v).replace(tzinfo=dt.timezone.utc).astimezone(ZoneInfo(zone))
        off = d.utcoffset()
        mins = int(off.total_seconds() // 60)
        sign = "+" if mins >= 0 else "-"
        frac = f".{d.microsecond:06d}" if d.microsecond else ""
        text = d.strftime("%Y-%m-%d %H:%M:%S") + frac + f"{sign}{abs(mins) // 60:02d}" + (f":{abs(mins) % 60:02d}" if mins % 60 else "")
    elif t == "binary" or str(t).startswith("fixed"):
        text = duck_blob(base64.b64decode(v))
    elif isinstance(v, bool):
        text = "true" if v else "false"
    else:
        text = str(v)
    if nested and re.search(r"[ ,:{}\[\]'\"]", text):
        text = "'" + text + "'"
    return text


def cells_equal(a, b):
    """a: floe's rendered cell, b: the engine's"""
    if a == b:
        return True
    if isinstance(a, float) or isinstance(b, float):
        try:
            x, y = float(a), float(b)
        except (TypeError, ValueError):
            return False
        return abs(x - y) <= 1e-4 * max(1.0, abs(x), abs(y))
    if isinstance(a, str) and isinstance(b, str):
        if {a, b} in ({"true", "1"}, {"false", "0"}):
            return True
        try:
            return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(a)))
        except ValueError:
            pass
        ta, tb = ts_instant(a), ts_instant(b)
        if ta is not None and tb is not None:
            return ta == tb
        # binary: floe prints base64, DuckDB \xAA escapes or the text
        try:
            raw = base64.b64decode(a, validate=True)
            return b in (duck_blob(raw), raw.decode("latin-1"))
        except Exception:
            return False
    return False


def sort_key(row):
    return tuple((0, "") if c is None else (1, str(c)) for c in row)


def compare(case, plan, result):
    if plan.count:
        got = [[int(result.strip())]]
    else:
        rows = [json.loads(l) for l in result.splitlines() if l.strip()]
        if plan.order:
            keys = plan.order
            for col, desc in reversed(keys):
                if col == "all":
                    rows.sort(key=lambda r: sort_key(list(r.values())))
                    continue
                name = next((k for k in (rows[0] if rows else {}) if k.lower() == col), col)
                rows.sort(key=lambda r: (r.get(name) is None, r.get(name) if r.get(name) is not None else 0), reverse=desc)
            if plan.limit is not None:
                rows = rows[plan.offset: plan.offset + plan.limit]
        elif plan.offset:
            rows = rows[plan.offset:]
        got = [list(r.values()) for r in rows]
    rows = [] if plan.count else rows
    if case.manual:
        want = [[case.manual["count"]]] if plan.count else case.manual["rows"]
        got_c = [[floe_cell_manual(x) for x in r] for r in got]
        return msets_equal(got_c, want, False), got_c, want
    if case.source == "impala":
        types = case.types
        want = [[impala_cell(c, types[i] if i < len(types) else "STRING") for i, c in enumerate(impala_split(r))] for r in case.expected]
        got_c = [[floe_cell_impala(c, types[i] if i < len(types) else "STRING") for i, c in enumerate(r)] for r in got]
        if plan.tz and not plan.count:
            from zoneinfo import ZoneInfo

            names = list(rows[0]) if rows else []
            tzcols = plan.tz_keys if plan.tz_keys is not None else timestamptz_columns(plan)
            zone = ZoneInfo(plan.tz)
            for r in got_c:
                for i, name in enumerate(names):
                    if name.lower() in tzcols and isinstance(r[i], dt.datetime):
                        r[i] = r[i].replace(tzinfo=dt.timezone.utc).astimezone(zone).replace(tzinfo=None)
        if plan.count:
            got_c = [[x[0]] for x in got]
    else:
        want = [r.split("\t") for r in case.expected]
        types = {}
        if rows and not plan.count:
            try:
                types = {f["name"]: f["type"] for f in table_schema(plan)["fields"]}
            except Exception:
                types = {}
        zone = next((m.group(1) for x in case.setup for m in [re.search(r"(?i)timezone\s*=\s*'([^']+)'", x)] if m), "UTC")
        names = list(rows[0]) if rows else []
        got_c = [[duck_typed(c, types.get(names[i]) if i < len(names) else None, zone) for i, c in enumerate(r)] for r in got]
    ordered = bool(plan.order) and case.ordered if case.source == "impala" else False
    return msets_equal(got_c, want, ordered), got_c, want


def floe_cell_manual(v):
    return v


def msets_equal(got, want, ordered):
    if len(got) != len(want):
        return False
    if not ordered:
        got = sorted(got, key=sort_key)
        want = sorted(want, key=sort_key)
    for g, w in zip(got, want):
        if len(g) != len(w) or not all(cells_equal(a, b) for a, b in zip(g, w)):
            return False
    return True


# ---- the test ---------------------------------------------------------------------------------------


# ---- through floe sql ------------------------------------------------------------------------


def balanced_call(text, start):
    """index just past the ')' closing the '(' at or after start"""
    depth, q = 0, None
    for i in range(text.index("(", start), len(text)):
        ch = text[i]
        if q:
            q = None if ch == q else q
        elif ch in "'\"":
            q = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise Unsupported("unbalanced parentheses")


def sql_quote(s):
    return "'" + str(s).replace("'", "''") + "'"


def sql_table(path, opts):
    """a table by path for floe sql, with its read options as a hint"""
    ref = sql_quote(path)
    hints = []
    if opts.get("snapshot_id") is not None:
        hints.append(f"'snapshot-id'='{opts['snapshot_id']}'")
    if opts.get("as_of"):
        raise Unsupported("FOR SYSTEM_TIME AS OF through floe sql")
    return ref + (f" /*+ OPTIONS({', '.join(hints)}) */" if hints else "")


def translate_sql(case):
    """translate_sql_zoneless, with Impala's session zone: Impala shows
    TIMESTAMPTZ in it (compare() converts the UTC instants floe prints); a
    literal compared with one would need the zone too, so that is refused."""
    body, tables, plan = translate_sql_zoneless(case)
    tz = None
    for st in split_top(case.sql, ";"):
        m = re.match(r"(?i)set\s+timezone\s*=\s*'?([^']*)'?$", clean_sql(st) or "")
        if m and m.group(1).upper() != "UTC":
            tz = m.group(1)
    if tz:
        if re.search(TS_LIT, body):
            raise Unsupported("a session time zone with timestamp literals")
        plan.tz = tz
        # SELECT * over the tables: their columns in order, a repeated name
        # keyed name_1, name_2 ... as floe sql's JSON keys them
        keys, seen = set(), {}
        for t, meta in tables:
            for f in table_schema(Plan(table=t, meta_file=meta))["fields"]:
                n = f["name"].lower()
                k = n if n not in seen else f"{n}_{seen[n]}"
                seen[n] = seen.get(n, 0) + 1
                if f["type"] in ("timestamptz", "timestamptz_ns"):
                    keys.add(k)
        if re.match(r"(?is)select\s+\*\s+from\s", body):
            plan.tz_keys = keys
    return body, tables, plan


def translate_sql_zoneless(case):
    """-> (SQL text for floe sql, [(table dir, metadata file)], Plan for compare())

    The pair's query as written, its tables referred to by path: DuckDB's
    ICEBERG_SCAN('path', ...) and views over it, Impala's section table."""
    if case.manual:
        raise Unsupported("not a query")
    stmts = []
    for st in split_top(case.sql, ";"):
        c = clean_sql(st)
        if not c:
            continue
        m = re.match(r"(?i)set\s+(\w+)\s*=\s*'?([^']*)'?$", c)
        if m:
            continue  # SET TIMEZONE: translate_sql
        stmts.append(c)
    if len(stmts) != 1:
        raise Unsupported("several statements" if stmts else "no query")
    body = stmts[0]
    if re.match(r"(?i)from\s", body):
        body = "SELECT * " + body
    if not re.match(r"(?i)select\s", body):
        raise Unsupported("not a SELECT")
    tables = []
    if case.source == "duckdb":
        for name, text in case.views.items():
            body = re.sub(rf"(?i)\b(from|join)\s+{re.escape(name)}\b", lambda m: f"{m.group(1)} {text}", body)
        out, pos = "", 0
        for m in re.finditer(r"(?i)\biceberg_scan\s*\(", body):
            if m.start() < pos:
                continue
            end = balanced_call(body, m.start())
            t, meta, _, opts = parse_from(body[m.start():end], case)
            tables.append((t, meta))
            out += body[pos:m.start()] + sql_table(meta or t, opts)
            pos = end
        body = out + body[pos:]
        # DuckDB's metadata table functions: floe sql has them, with DuckDB's
        # arguments (version, version_name_format, metadata_compression_codec)
        out, pos = "", 0
        for m in re.finditer(r"(?i)\biceberg_(metadata|snapshots|column_stats|partition_stats)\s*\(", body):
            end = balanced_call(body, m.start())
            args = split_top(body[m.end():end - 1])
            path = args[0].strip().strip("'\"")
            tables.append((DUCKDB / path, None))
            # DuckDB takes "text" as a string in these arguments
            call = re.sub(r'"([^"]*)"', lambda q: sql_quote(q.group(1)), body[m.start():end])
            out += body[pos:m.start()] + call
            pos = end
        body = out + body[pos:]
        code = re.sub(r"'[^']*'", "''", body)  # not in the paths
        if re.search(r"(?i)\b(iceberg_(?!metadata|snapshots|column_stats|partition_stats)\w+|read_parquet|unnest|filename)\b|::", code):
            raise Unsupported("DuckDB functions or casts")
    elif case.source == "impala":
        names = {m.group(2).lower() for m in re.finditer(r"(?i)\b(from|join)\s+([\w.]+)", body)}
        if len(names) != 1 or not case.data_dir or re.search(r"(?i)\bfrom\s+[\w.]+(\s+(as\s+)?\w+)?\s*,", body):
            return impala_tables_sql(case, body)
        t = TESTDATA / case.data_dir
        tables.append((t, None))

        def ref(m):
            opts = {}
            tt = m.group(3) or ""
            mv = re.match(r"(?i)\s+for\s+system_version\s+as\s+of\s+(\d+)", tt)
            if mv:
                opts["snapshot_id"] = int(mv.group(1))
            elif tt.strip():
                raise Unsupported("FOR SYSTEM_TIME AS OF through floe sql")
            # Impala qualifies columns by the table's name: keep it as the alias
            nxt = m.group(4)
            alias = "" if re.match(r"\s+(?!(?i:where|order|group|limit|join|inner|left|right|full|cross|union|having|on)\b)\w", nxt) else f" AS {m.group(2).split('.')[-1]}"
            return f"{m.group(1)} {sql_table(t, opts)}{alias}{nxt}"

        body = re.sub(r"(?i)\b(from|join)\s+([\w.]+)((?:\s+for\s+system_(?:version|time)\s+as\s+of\s+(?:\d+|'[^']*'))?)(\s*\S?)",
                      ref, body)
        body = re.sub(r'"([^"]*)"', lambda m: sql_quote(m.group(1)), body)  # Impala: "text" is a string
    else:
        raise Unsupported("not a query of DuckDB or Impala")
    if not tables:
        raise Unsupported("no table")
    return body, tables, Plan(table=tables[0][0], meta_file=tables[0][1])


_IMPALA_DIRS = None


def impala_table_dir(name):
    """an Impala table name -> its directory in the test data (by its last part)"""
    global _IMPALA_DIRS
    if _IMPALA_DIRS is None:
        _IMPALA_DIRS = {}
        for m in sorted(IMPALA.rglob("metadata")):
            if m.is_dir():
                _IMPALA_DIRS.setdefault(m.parent.name.lower(), m.parent)
    return _IMPALA_DIRS.get(name.split(".")[-1].lower())


def field_type(table_dir, path):
    """the Iceberg type (schema JSON) of a dotted field path of a table, or None"""
    t = {"type": "struct", "fields": table_schema(Plan(table=table_dir))["fields"]}
    for part in path:
        if not isinstance(t, dict) or t.get("type") != "struct":
            return None
        t = next((f["type"] for f in t["fields"] if f["name"].lower() == part.lower()), None)
    return t


def impala_tables_sql(case, body):
    """an Impala query over several tables, or a table and its collections
    (FROM t, t.list a): each table by its directory, each collection as
    UNNEST(t.list) WITH ORDINALITY AS a (item, pos1), its pos 0-based as Impala's"""
    tables = []
    aliases = {}  # alias or table name -> directory
    positions = []

    def table(name, rest):
        d = impala_table_dir(name)
        if case.data_dir and (d is None or len(set(n.split(".")[-1] for n in aliases) | {name.split(".")[-1]}) == 1):
            d = TESTDATA / case.data_dir
        if d is None:
            raise Unsupported(f"no directory for table {name}")
        if (d, None) not in tables:
            tables.append((d, None))
        alias = rest.split()[-1] if rest.split() else name.split(".")[-1]
        aliases[alias.lower()] = d
        aliases.setdefault(name.split(".")[-1].lower(), d)
        return sql_table(d, {}) + (rest if rest.split() else f" AS {alias}")

    def collection(toks):
        parts = toks[0].split(".")
        base = parts[0].lower()
        if base not in aliases:
            raise Unsupported(f"no table {parts[0]} for {toks[0]}")
        t = field_type(aliases[base], parts[1:])
        alias = [x for x in toks[1:] if x.lower() != "as"]
        alias = alias[-1] if alias else parts[-1]
        if isinstance(t, dict) and t.get("type") == "list":
            positions.append(alias)
            return f"UNNEST({toks[0]}) WITH ORDINALITY AS {alias} (item, pos1)"
        if isinstance(t, dict) and t.get("type") == "map":
            return f"UNNEST({toks[0]}) AS {alias} (key, value)"
        raise Unsupported(f"{toks[0]} is not a collection")

    def from_list(m):
        items = []
        for it in split_top(m.group(2)):
            toks = it.split()
            if not toks:
                raise Unsupported("empty FROM item")
            if "." in toks[0] and toks[0].split(".")[0].lower() in aliases:
                items.append(collection(toks))
            else:
                items.append(table(toks[0], " " + " ".join(toks[1:]) if toks[1:] else ""))
        return f"{m.group(1)} {', '.join(items)}"

    body = re.sub(r"(?is)\b(from)\s+(.+?)(?=\s+(?:where|group|order|limit|union|except|intersect|minus|having|join|inner|left|right|full|cross)\b|\)|$)",
                  from_list, body)
    body = re.sub(r"(?i)\b(join)\s+([\w.]+)(\s+(?!on\b)\w+)?", lambda m: f"{m.group(1)} {table(m.group(2), m.group(3) or '')}", body)
    for a in positions:
        body = re.sub(rf"(?i)\b{re.escape(a)}\.pos\b", f"({a}.pos1 - 1)", body)
    body = re.sub(r'"([^"]*)"', lambda m: sql_quote(m.group(1)), body)
    if re.search(r"(?i)\bfor\s+system_(version|time)\b", body):
        raise Unsupported("time travel in a query over several tables")
    if not tables:
        raise Unsupported("no table")
    return body, tables, Plan(table=tables[0][0], meta_file=tables[0][1])


def run_case_sql(case, why):
    """a pair floe scan cannot express, through floe sql -> (passed, detail)"""
    try:
        sql, tables, plan = translate_sql(case)
    except Unsupported as e:
        return False, f"not expressible: {why}; floe sql: {e}"
    args = ["sql", "--format", "json", "-e", sql]
    seen = set()
    for t, meta in tables:
        for r in table_rules(t, meta):
            if r not in seen:
                seen.add(r)
                args += ["--path-map", r]
    return run_and_compare(case, plan, args, f"floe sql (SQL: {sql})")


def run_and_compare(case, plan, args, what):
    """run floe with args and compare its output with the pair's answer"""
    p = run_floe(args, cwd_for(case))
    if case.expect_error:
        # through floe sql, an error of floe's SQL (syntax it lacks) is no answer
        unsupported = what.startswith("floe sql") and re.search(r"not supported|found .* expected|expected .*, found", p.stderr)
        return p.returncode != 0 and not unsupported, f"floe exit {p.returncode}: {p.stderr.strip()[:300]}"
    if p.returncode != 0:
        return False, f"{what} failed: {p.stderr.strip()[:500]}"
    try:
        ok, got, want = compare(case, plan, p.stdout)
    except Exception as e:  # a comparison the harness cannot make is a failure
        return False, f"cannot compare: {e!r}; output {p.stdout[:300]}"
    return ok, f"{what}: got {got[:12]} want {want[:12]}"


def run_case(case):
    """-> (passed, detail)"""
    try:
        plan = translate(case)
    except Unsupported as e:
        return run_case_sql(case, e)
    args = floe_args(plan, case)
    ok, detail = run_and_compare(case, plan, args, f"floe {' '.join(map(str, args))}")
    if not ok and not case.expect_error and plan.where and " failed: " in detail:
        # a WHERE floe scan's filter cannot say (a column against a column,
        # functions): the same query through floe sql's executor
        ok2, detail2 = run_case_sql(case, "floe scan's filter")
        if ok2:
            return ok2, detail2
    return ok, detail


@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_expected_pair(case):
    ok, detail = run_case(case)
    if case.id in SKIPS:
        if ok:
            pytest.fail(f"passes now: remove it from {SKIPS_FILE.name} ({SKIPS[case.id]})")
        pytest.skip(SKIPS[case.id])
    assert ok, detail


def test_skip_list_is_current():
    ids = {c.id for c in ALL}
    stale = [k for k in SKIPS if k not in ids]
    assert not stale, f"skip list names unknown pairs: {stale}"
