#!/usr/bin/env python3
"""Example HomeAgent process plugin, Python standard library only.

It speaks the process-plugin protocol (docs/PLUGINS.md "Process plugins
(JSON-RPC)"): one JSON-RPC 2.0 message per line on stdin (kernel -> plugin)
and stdout (plugin -> kernel); anything for humans goes to stderr, which the
box logs under the plugin's name.

It registers
  * a tool `hello_greet` {"name": str} -> "<greeting>, <name>!" (the greeting
    comes from the plugin's setting plugin.python-hello.greeting), and
  * a before_output stage handler that replaces ":wave:" with a word.
"""
import json
import sys
import threading

PROTOCOL = 1

_out_lock = threading.Lock()
_next_id = 0
_pending = {}  # id -> {"event": threading.Event, "reply": dict}
settings = {}


def send(msg):
    """Write one message as one line on stdout."""
    line = json.dumps(msg, separators=(",", ":"))
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def log(message):
    print(message, file=sys.stderr, flush=True)


def call(method, params):
    """Call the kernel and wait for its answer (from a worker thread only)."""
    global _next_id
    with _out_lock:
        _next_id += 1
        rid = _next_id
    waiter = {"event": threading.Event(), "reply": None}
    _pending[rid] = waiter
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    waiter["event"].wait()
    reply = waiter["reply"]
    if "error" in reply:
        raise RuntimeError(reply["error"]["message"])
    return reply.get("result")


def register():
    """The start window: register everything, then answer `start`."""
    call("register_tool", {
        "name": "hello_greet",
        "description": 'Greet someone by name. Example: {"name": "Ada"}',
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}},
            "required": ["name"],
            "additionalProperties": False,
        },
    })
    call("register_stage", {"stage": "before_output"})


def handle(msg):
    """Answer one request from the kernel; returns the result or raises."""
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "initialize":
        if params.get("protocol") != PROTOCOL:
            raise ValueError("unsupported protocol %r" % params.get("protocol"))
        settings.update(params.get("settings") or {})
        log("python-hello: initialized (sandboxed=%s)" % params.get("sandboxed"))
        return {"protocol": PROTOCOL, "name": "python-hello"}
    if method == "start":
        register()
        return {}
    if method == "tool.call":
        if params["name"] == "hello_greet":
            greeting = settings.get("greeting") or "Hello"
            return {"content": "%s, %s!" % (greeting, params["args"]["name"])}
        return {"content": "unknown tool", "is_error": True}
    if method == "stage.run":
        text = params.get("final_text", "")
        if ":wave:" in text:
            return {"set": {"final_text": text.replace(":wave:", "(waves)")}}
        return {}
    if method == "shutdown":
        return {}
    raise LookupError("unknown method " + str(method))


def serve_request(msg):
    try:
        result = handle(msg)
        send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
    except LookupError as e:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": str(e)}})
    except Exception as e:  # noqa: BLE001 - every failure goes back as an error
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32000, "message": str(e)}})
    if msg.get("method") == "shutdown":
        sys.stdout.flush()
        import os
        os._exit(0)


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            log("python-hello: ignored a line that is not JSON")
            continue
        if "method" in msg and "id" in msg:
            # Requests run on threads: `start` waits for answers read by this loop.
            threading.Thread(target=serve_request, args=(msg,)).start()
        elif "method" in msg:
            pass  # notifications (event, cancel): nothing subscribed here
        elif "id" in msg and msg["id"] in _pending:
            waiter = _pending.pop(msg["id"])
            waiter["reply"] = msg
            waiter["event"].set()
    # stdin closed: the kernel is gone. Fail the calls still waiting for it;
    # requests being answered finish, then the interpreter exits.
    for rid in list(_pending):
        waiter = _pending.pop(rid)
        waiter["reply"] = {"error": {"message": "the kernel closed stdin"}}
        waiter["event"].set()


if __name__ == "__main__":
    main()
