"""Generate the Python stubs of the wire contract into the SDK.

    python scripts/gen_proto.py            # regenerate sdk/atout/v1/atout_pb2{,_grpc}.py{,i}
    python scripts/gen_proto.py --check    # exit 1 when the committed stubs are stale
    python scripts/gen_proto.py --out DIR  # generate under DIR instead of sdk/ (DIR/atout/v1/...)

It runs ``python -m grpc_tools.protoc -I proto --python_out=sdk --grpc_python_out=sdk
--pyi_out=sdk proto/atout/v1/atout.proto`` (needs ``pip install grpcio-tools``), so that the
generated ``from atout.v1 import atout_pb2`` resolves inside the SDK package. After a regeneration
with a newer grpcio-tools, raise the ``grpcio`` and ``protobuf`` lower bounds in
``sdk/pyproject.toml`` to the versions stamped in the stubs (``tests/sdk/test_stubs_fresh.py``
checks that they match).
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTOS = ("atout/v1/atout.proto",)
SDK = ROOT / "sdk"
GENERATED = ("atout_pb2.py", "atout_pb2.pyi", "atout_pb2_grpc.py")


def generate(out: Path) -> list[Path]:
    """Run protoc on the contract, writing the stubs under ``out`` (``out/atout/v1/...``)."""
    out.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_ROOT}",
        f"--python_out={out}", f"--grpc_python_out={out}", f"--pyi_out={out}",
        *(str(PROTO_ROOT / p) for p in PROTOS),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"protoc failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}")
    return [out / "atout" / "v1" / name for name in GENERATED]


def stale_files(committed_root: Path = SDK) -> dict[str, str]:
    """Regenerate into a temporary directory; return {file name: unified diff} for stubs that differ."""
    diffs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fresh in generate(Path(tmp)):
            committed = committed_root / "atout" / "v1" / fresh.name
            new = fresh.read_text()
            old = committed.read_text() if committed.exists() else ""
            if new != old:
                diffs[fresh.name] = "".join(
                    difflib.unified_diff(
                        old.splitlines(keepends=True), new.splitlines(keepends=True),
                        f"committed/{fresh.name}", f"regenerated/{fresh.name}", n=1,
                    )
                )  # fmt: skip
    return diffs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=SDK, help="root to generate under (default: sdk/)")
    parser.add_argument("--check", action="store_true", help="only check that the committed stubs are fresh")
    args = parser.parse_args(argv)
    if args.check:
        diffs = stale_files()
        for name, diff in diffs.items():
            print(f"stale: sdk/atout/v1/{name}\n{diff[:4000]}")
        if diffs:
            print("run: python scripts/gen_proto.py")
            return 1
        print("stubs are fresh")
        return 0
    for path in generate(args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
