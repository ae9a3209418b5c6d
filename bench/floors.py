"""The floors a relay is measured against: socat (stdio) and nginx (HTTP), installed with apt-get when missing."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

LOCK = Path(tempfile.gettempdir()) / "wiretap-bench-apt.lock"


def ensure(executable: str, package: str) -> str:
    """The path of ``executable``, after ``apt-get install -y package`` if it is not on PATH (or in sbin)."""
    found = shutil.which(executable) or shutil.which(executable, path="/usr/sbin:/sbin")
    if found:
        return found
    if shutil.which("apt-get") is None:
        raise SystemExit(f"{executable} is missing and there is no apt-get to install {package}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = shutil.which(executable) or shutil.which(executable, path="/usr/sbin:/sbin")
        if not found:
            subprocess.run(["apt-get", "update"], capture_output=True, env=env, timeout=600)
            install = subprocess.run(
                ["apt-get", "install", "-y", "--no-install-recommends", package],
                capture_output=True,
                text=True,
                env=env,
                timeout=1200,
            )
            found = shutil.which(executable) or shutil.which(executable, path="/usr/sbin:/sbin")
            if not found:
                raise SystemExit(f"apt-get install {package} failed:\n{install.stdout}{install.stderr}")
    return found


NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream backend {{
        server {upstream};
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
        }}
    }}
}}
"""


def nginx_command(nginx: str, upstream_host_port: str, port: int, tmp: Path) -> list[str]:
    """nginx as a plain reverse proxy: keepalive upstream, no buffering, no access log."""
    folder = tmp / "nginx"
    folder.mkdir(exist_ok=True)
    conf = folder / "nginx.conf"
    conf.write_text(NGINX_CONF.format(tmp=folder, upstream=upstream_host_port, port=port))
    return [nginx, "-p", str(folder), "-c", str(conf), "-e", str(folder / "nginx-error.log")]


def socat_command(socat: str, server: list[str]) -> list[str]:
    """socat relaying its stdio to SERVER's pipes with a 256 KiB buffer: a C relay that records nothing."""
    return [socat, "-b", "262144", "STDIO", f"EXEC:{' '.join(server)},pipes"]
