"""moto's server (same arguments as `python -m moto.server`) with Glue's
optimistic locking as AWS enforces it: an UpdateTable that carries a
VersionId other than the table's current one is refused with
ConcurrentModificationException (moto's own UpdateTable ignores it), and the
compare and the update happen under one lock, so two writers that read the
same version cannot both win. moto already bumps the version on each update.

With MOTO_GLUE_CONTROL=<file> holding {"refuse": n, "lose": m}, the next n
UpdateTables are preceded by a simulated commit of another writer (the
table's version moves on, so the request is refused as stale), and the next
m are applied but answered HTTP 500 (an answer lost after the commit). The
file also counts "updates", "refused" (all refusals) and "lost".
"""
import json
import os
import sys
import threading

from moto.core.exceptions import JsonRESTError
from moto.glue import responses


class ConcurrentModificationException(JsonRESTError):
    code = 400

    def __init__(self, message):
        super().__init__("ConcurrentModificationException", message)


class InternalServiceException(JsonRESTError):
    code = 500

    def __init__(self, message):
        super().__init__("InternalServiceException", message)


_lock = threading.Lock()
_original = responses.GlueResponse.update_table


def _control():
    path = os.environ.get("MOTO_GLUE_CONTROL")
    if not path or not os.path.exists(path):
        return path, {}
    with open(path) as f:
        text = f.read().strip()
    return path, json.loads(text) if text else {}


def _save(path, ctl):
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump(ctl, f)
        os.replace(path + ".tmp", path)


def update_table(self):
    with _lock:
        path, ctl = _control()
        ctl["updates"] = ctl.get("updates", 0) + 1
        db = self.parameters.get("DatabaseName")
        name = self.parameters.get("TableInput", {}).get("Name")
        table = self.glue_backend.get_table(db, name)
        if ctl.get("refuse", 0) > 0:
            ctl["refuse"] -= 1
            table.update(dict(table.get_version(str(table._current_version))))
        want = self.parameters.get("VersionId")
        if want is not None and str(want) != str(table._current_version):
            ctl["refused"] = ctl.get("refused", 0) + 1
            _save(path, ctl)
            raise ConcurrentModificationException(
                f"Update table failed due to concurrent modifications: version {want} is not "
                f"the current version {table._current_version} of {db}.{name}")
        result = _original(self)
        if ctl.get("lose", 0) > 0:
            ctl["lose"] -= 1
            ctl["lost"] = ctl.get("lost", 0) + 1
            _save(path, ctl)
            raise InternalServiceException("injected: the update was applied, its answer lost")
        _save(path, ctl)
        return result


responses.GlueResponse.update_table = update_table

if __name__ == "__main__":
    from moto.server import main

    main(sys.argv[1:])
