"""The served app under hostile lm-eval uploads: its memory and its upload folder.

    .venv/bin/python -m benchmarks.bench_uploads [--lines 3100000] [--declared-gb 3]

A real server (``python -m ui.serve --server.address 0.0.0.0``, the way a server beyond
this computer is started) on a small store, driven by headless Chromium through the Data
page: lm-eval format, one zip uploaded, Import pressed, until the page answers. Two zips:

- ``lines.zip`` (about 600 KB): one run whose samples ``.jsonl.gz`` holds ``--lines``
  identical lines (3.1 million: about 250 MB once unpacked);
- ``bomb.zip`` (about 3 MB): one member declaring ``--declared-gb`` GB of zeros.

Each is uploaded with writes off (``LBE_APP_WRITES`` unset: the page offers no upload, so
the zip cannot even be given) and with writes on (``LBE_APP_WRITES=1``). While the page
works, the server's resident memory (its process and children, psutil) and the size of
every ``lbe-upload-*`` folder are sampled every 50 ms; the peaks, the time until the page
answers and its one sentence are printed and written to
``benchmarks/results/bench_uploads.json``. Measure on a quiet machine (``uptime``).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_uploads.json"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TS = "2025-01-02T03-04-05.000006"


def make_zips(folder: Path, lines: int, declared_gb: float) -> dict[str, Path]:
    """The two hostile uploads (see the module docstring)."""
    line = json.dumps({"doc_id": 0, "filter": "none", "metrics": ["acc"], "acc": 1}) + "\n"
    per = 20_000
    block = gzip.compress((line * per).encode(), compresslevel=9)
    gz = block * max(1, lines // per)  # gzip members one after another: one file
    lines_zip = folder / "lines.zip"
    with zipfile.ZipFile(lines_zip, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"out/org__model/samples_task_{TS}.jsonl.gz", gz)
    bomb = folder / "bomb.zip"
    chunk = b"\0" * (64 << 20)
    member = f"out/org__model/samples_task_{TS}.jsonl"
    with (
        zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf,
        zf.open(member, "w", force_zip64=True) as out,
    ):
        left = int(declared_gb * (1 << 30))
        while left > 0:
            out.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)
    return {"lines.zip": lines_zip, "bomb.zip": bomb}


def small_store(path: Path) -> Path:
    import numpy as np

    from lifelong_core.store import Store

    with Store.create(path) as st:
        st.insert_matrix(
            (np.arange(30 * 40).reshape(30, 40) % 3 == 0).astype(np.uint8),
            [f"m{i}" for i in range(30)],
            [f"s{j}" for j in range(40)],
            dataset="d",
        )
    return path


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Sampler:
    """Peak resident memory of a process tree and peak size of the upload folders."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.proc = psutil.Process(pid)
        self.peak_rss = 0
        self.peak_disk = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _rss(self) -> int:
        import psutil

        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
        return total

    @staticmethod
    def _disk() -> int:
        total = 0
        for folder in Path(tempfile.gettempdir()).glob("lbe-upload-*"):
            for f in folder.rglob("*"):
                with contextlib.suppress(OSError):
                    total += f.stat().st_size if f.is_file() else 0
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_rss = max(self.peak_rss, self._rss())
            self.peak_disk = max(self.peak_disk, self._disk())
            time.sleep(0.05)

    def __enter__(self) -> Sampler:
        self.peak_rss = self._rss()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def serve(store: Path, writes: bool, log: Path):
    port = _free_port()
    env = dict(os.environ, LBE_STORE=str(store))
    env.pop("LBE_APP_WRITES", None)
    if writes:
        env["LBE_APP_WRITES"] = "1"
    argv = [sys.executable, "-m", "ui.serve", "--server.headless", "true"]
    argv += ["--server.port", str(port), "--server.address", "0.0.0.0"]
    argv += ["--browser.gatherUsageStats", "false"]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    return proc, base
        except OSError:
            time.sleep(0.25)
    proc.kill()
    raise SystemExit(f"the server did not start; see {log}")


def upload(base: str, proc, zip_path: Path | None) -> dict:
    """Open the Data page, upload ``zip_path`` as lm-eval output and press Import."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"{base}/Data", timeout=120_000)
        page.get_by_text("Import", exact=True).first.wait_for(timeout=120_000)
        time.sleep(1.0)
        uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
        if zip_path is None or page.get_by_text("lm-eval", exact=False).count() == 0:
            offered = uploader.count() > 0
            browser.close()
            return {"offered": offered, "answer": "no upload offered", "seconds": 0.0}
        page.get_by_text("lm-evaluation-harness", exact=False).first.click()
        time.sleep(1.0)
        offered = uploader.count() > 0
        if not offered:
            browser.close()
            return {"offered": False, "answer": "no upload offered", "seconds": 0.0}
        with Sampler(proc.pid) as sampler:
            t0 = time.perf_counter()
            uploader.last.set_input_files(str(zip_path))
            time.sleep(1.0)
            page.get_by_role("button", name="Import into").click()
            box = page.locator(
                '[data-testid="stAlertContentError"], [data-testid="stAlertContentSuccess"]'
            )
            box.first.wait_for(timeout=600_000)
            seconds = time.perf_counter() - t0
            answer = box.first.inner_text()
        browser.close()
        return {
            "offered": True,
            "answer": answer,
            "seconds": round(seconds, 1),
            "peak_rss_mb": round(sampler.peak_rss / 2**20),
            "peak_upload_folder_mb": round(sampler.peak_disk / 2**20, 1),
        }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=3_100_000)
    p.add_argument("--declared-gb", type=float, default=3.0)
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-uploads-") as tmp:
        folder = Path(tmp)
        zips = make_zips(folder, args.lines, args.declared_gb)
        store = small_store(folder / "served.duckdb")
        for writes in (False, True):
            proc, base = serve(store, writes, folder / f"server-{writes}.log")
            try:
                import psutil

                idle = round(psutil.Process(proc.pid).memory_info().rss / 2**20)
                for name, path in zips.items():
                    got = upload(base, proc, path)
                    row = {
                        "writes": "on (LBE_APP_WRITES=1)" if writes else "off",
                        "zip": name,
                        "zip_kb": round(path.stat().st_size / 1024),
                        "server_idle_mb": idle,
                        **got,
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
            finally:
                proc.terminate()
                proc.wait(30)
    load = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "command": "python -m benchmarks.bench_uploads "
                + " ".join(sys.argv[1:] if argv is None else argv),
                "machine": f"{platform.node()} ({os.cpu_count()} cores)",
                "load_1min_at_end": load[0],
                "rows": rows,
            },
            indent=2,
        )
    )
    print(f"load average at the end: {load[0]:.2f}; wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
