"""A local HTTPS stand-in for kube-apiserver that checks bearer tokens or client certificates, and fake exec plugins."""

from __future__ import annotations

import base64
import json
import ssl
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from components.reconciler import signing

OBJECT_PATH = "/api/v1/namespaces/default/configmaps/probe"
CLIENT_NAME = "exec-user"


@dataclass
class ApiServer:
    """What the server trusts (tokens, its CA's client certificates) and every Authorization header it saw."""

    url: str
    ca: signing.Issued
    tokens: set[str] = field(default_factory=set)
    seen: list[str] = field(default_factory=list)

    def client_certificate(self) -> signing.Issued:
        """A client certificate the server accepts, for CLIENT_NAME."""
        return signing.issue(self.ca.cert, self.ca.key, CLIENT_NAME, [], [], [], ["client"], 3600)

    def kubeconfig(self, user: dict[str, Any]) -> str:
        """A kubeconfig for this server whose user entry is `user`."""
        ca = base64.b64encode(self.ca.cert.encode()).decode()
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": self.url, "certificate-authority-data": ca}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )


def _handler(state: ApiServer) -> type[BaseHTTPRequestHandler]:
    """A handler answering GET OBJECT_PATH to a known token or a client certificate, 401 otherwise."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            header = self.headers.get("Authorization", "")
            state.seen.append(header)
            cert: Any = self.connection.getpeercert() if isinstance(self.connection, ssl.SSLSocket) else None
            common = next((n[1] for rdn in cert["subject"] for n in rdn if n[0] == "commonName"), "") if cert else ""
            user = common or (header.removeprefix("Bearer ") in state.tokens and "token-user")
            code, body = (200, {"kind": "ConfigMap", "data": {"user": user}}) if user else (401, {"reason": "x"})
            payload = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *_: Any) -> None:
            """Quiet."""

    return Handler


@contextmanager
def api_server() -> Iterator[ApiServer]:
    """A served ApiServer on a free loopback port, with a certificate for 127.0.0.1 from its own CA."""
    ca = signing.self_signed_ca("test-ca", 3600)
    serving = signing.issue(ca.cert, ca.key, "apiserver", [], ["localhost"], ["127.0.0.1"], ["server"], 3600)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.verify_mode = ssl.CERT_OPTIONAL
    context.load_verify_locations(cadata=ca.cert)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "c").write_text(serving.cert)
        Path(tmp, "k").write_text(serving.key)
        context.load_cert_chain(str(Path(tmp, "c")), str(Path(tmp, "k")))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    state = ApiServer(url=f"https://127.0.0.1:{httpd.server_address[1]}", ca=ca)
    httpd.RequestHandlerClass = _handler(state)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def exec_plugin(directory: Path, answers: list[dict[str, Any]], exit_code: int = 0, stderr: str = "") -> Path:
    """An executable that prints the next of `answers` (the last one again when used up), as JSON, each run.

    Every run is recorded in `runs.jsonl` beside it: its arguments, KUBERNETES_EXEC_INFO and FAKE_PLUGIN_ENV.
    """
    script = directory / "fake-auth-plugin"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "from pathlib import Path\n"
        "here = Path(__file__).parent\n"
        f"answers = {answers!r}\n"
        "runs = here / 'runs.jsonl'\n"
        "count = len(runs.read_text().splitlines()) if runs.exists() else 0\n"
        "record = {'args': sys.argv[1:], 'info': os.environ.get('KUBERNETES_EXEC_INFO'),"
        " 'env': os.environ.get('FAKE_PLUGIN_ENV')}\n"
        "with runs.open('a') as f: f.write(json.dumps(record) + '\\n')\n"
        "print(json.dumps(answers[min(count, len(answers) - 1)]))\n"
        f"sys.stderr.write({stderr!r})\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(0o755)
    return script


def runs(script: Path) -> list[dict[str, Any]]:
    """The recorded runs of a fake plugin."""
    path = script.parent / "runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def exec_credential(api_version: str = "client.authentication.k8s.io/v1beta1", **status: str) -> dict[str, Any]:
    """An ExecCredential answer with `status`."""
    return {"apiVersion": api_version, "kind": "ExecCredential", "status": status}
