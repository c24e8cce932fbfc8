"""`make live`: serve the built book and a Jupyter server on 127.0.0.1 so the "Live Code" button runs Python.

What it starts, and why it is safe on a shared machine:
- a static file server for ``_build/html`` bound to 127.0.0.1 (never 0.0.0.0);
- ``jupyter server`` bound to 127.0.0.1 with a fresh random token (``secrets.token_hex(32)``), CORS allowed
  for the book's own origin only (``ServerApp.allow_origin``), terminals off, its runtime files (holding the
  token) in a private temporary directory that is deleted on exit. The token is passed through the
  environment, never on a command line, and is written to no file in the repository.

The URL it prints carries the Jupyter port and token in the fragment (``#live-port=..&live-token=..``), which
browsers never send to a server; ``_static/live.js`` moves them into the tab's sessionStorage. Ctrl-C (or
SIGTERM) stops both servers and the kernels.

    python scripts/live.py [--no-build] [--book-port N] [--jupyter-port N] [--html DIR]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
SOURCES = ("book", "src", "kernels", "_static", "_config.yml", "_toc.yml")


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files only; quiet; no caching so a rebuilt book is picked up on reload."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - signature fixed by the base class
        pass


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _newest_mtime(paths) -> float:
    newest = 0.0
    for name in paths:
        p = ROOT / name
        if p.is_file():
            newest = max(newest, p.stat().st_mtime)
        elif p.is_dir():
            for f in p.rglob("*"):
                if f.is_file() and "__pycache__" not in f.parts and "vendor" not in f.parts:
                    newest = max(newest, f.stat().st_mtime)
    return newest


def needs_build(html: Path) -> bool:
    """True when ``html/index.html`` is missing or older than any chapter, library or config source."""
    index = html / "index.html"
    return not index.is_file() or index.stat().st_mtime < _newest_mtime(SOURCES)


def landing_page(html: Path) -> str:
    """The book's first page. Jupyter Book's index.html is a bare redirect that would drop the URL fragment."""
    index = html / "index.html"
    text = index.read_text() if index.is_file() else ""
    m = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', text, re.I)
    return m.group(1) if m else "index.html"


def start_static(html: Path, port: int) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_Handler, directory=str(html))
    server = http.server.ThreadingHTTPServer((HOST, port), handler)
    threading.Thread(target=server.serve_forever, name="book-http", daemon=True).start()
    return server


def start_jupyter(port: int, token: str, origin: str, runtime_dir: str) -> subprocess.Popen:
    env = dict(os.environ)
    env["JUPYTER_TOKEN"] = token
    env["JUPYTER_RUNTIME_DIR"] = runtime_dir
    cmd = [
        sys.executable, "-m", "jupyter_server",
        f"--ServerApp.ip={HOST}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.open_browser=False",
        f"--ServerApp.root_dir={ROOT}",
        f"--ServerApp.allow_origin={origin}",
        "--ServerApp.allow_remote_access=False",
        "--ServerApp.allow_credentials=False",
        "--ServerApp.terminals_enabled=False",
        "--ServerApp.log_level=WARN",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers and CI run as root
        cmd.append("--ServerApp.allow_root=True")
    return subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)


def wait_ready(url: str, token: str, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    req = urllib.request.Request(url + "/api/status", headers={"Authorization": f"token {token}"})
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter server exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(req, timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    raise RuntimeError(f"jupyter server at {url} not ready after {timeout:.0f} s")


def stop_jupyter(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # jupyter_server shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="built book directory")
    ap.add_argument("--book-port", type=int, default=0, help="port for the book (default: a free one)")
    ap.add_argument("--jupyter-port", type=int, default=0, help="port for Jupyter (default: a free one)")
    ap.add_argument("--no-build", action="store_true", help="never run `make book`, even when stale")
    args = ap.parse_args(argv)
    html = args.html.resolve()

    if needs_build(html):
        if args.no_build:
            if not (html / "index.html").is_file():
                print(f"live: no built book at {html}; run `make book` first", file=sys.stderr)
                return 2
            print("live: the built book is older than its sources (--no-build: serving it anyway)",
                  file=sys.stderr)
        else:
            print("live: building the book first (make book)…", flush=True)
            subprocess.run(["make", "book"], cwd=ROOT, check=True)

    book = start_static(html, args.book_port)
    book_port = book.server_address[1]
    origin = f"http://{HOST}:{book_port}"
    jupyter_port = args.jupyter_port or _free_port()
    jupyter_url = f"http://{HOST}:{jupyter_port}"
    token = secrets.token_hex(32)
    runtime_dir = tempfile.mkdtemp(prefix="theorybook-live-")  # mode 0700; holds the token, removed on exit
    proc = start_jupyter(jupyter_port, token, origin, runtime_dir)

    def _terminate(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    try:
        wait_ready(jupyter_url, token, proc)
        url = f"{origin}/{landing_page(html)}#live-port={jupyter_port}&live-token={token}"
        print(f"\nExecutable Theory, live: open\n\n    {url}\n\nand press the rocket menu's 'Live Code' on a "
              "chapter. Ctrl-C stops both servers.\n", flush=True)
        print("live-info: " + json.dumps({"url": url, "book": origin, "jupyter": jupyter_url,
                                            "jupyter_pid": proc.pid}), flush=True)
        while proc.poll() is None:
            time.sleep(0.5)
        print(f"live: jupyter server exited with code {proc.returncode}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nlive: stopping…", flush=True)
        return 0
    except RuntimeError as err:
        print(f"live: {err}", file=sys.stderr)
        return 1
    finally:
        book.shutdown()
        book.server_close()
        stop_jupyter(proc)
        shutil.rmtree(runtime_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
