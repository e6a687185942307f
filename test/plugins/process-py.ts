/**
 * A misbehaving process plugin for tests, in Python (starts in ~20 ms):
 * a single-threaded protocol loop whose registrations and handlers are
 * Python snippets. `tool(name, args)` returns the tool's content;
 * `stage(ctx)` returns the `set` dict (or None); `after_start()` runs right
 * after the start answer (crash, garbage...); `on_shutdown()` runs on
 * `shutdown` (default: exit 0).
 */
export interface PyPlugin {
  /** [method, params] pairs sent during the start window. */
  register?: Array<[string, Record<string, unknown>]>;
  /** Python body of `def tool(name, args):` (indented by the caller's 4 spaces). */
  tool?: string;
  stage?: string;
  afterStart?: string;
  onShutdown?: string;
  /** Python statements run before anything (imports, signal handlers). */
  prelude?: string;
}

const indent = (body: string): string =>
  body
    .trim()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

/** The main.py of `p`. */
export function pyPlugin(p: PyPlugin): string {
  return `#!/usr/bin/env python3
import json, os, signal, subprocess, sys, time
${p.prelude ?? ''}
REG = json.loads(${JSON.stringify(JSON.stringify(p.register ?? []))})

def send(m):
    sys.stdout.write(json.dumps(m) + "\\n")
    sys.stdout.flush()

def rd():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)

def tool(name, args):
${indent(p.tool ?? 'return "ok"')}

def stage(ctx):
${indent(p.stage ?? 'return None')}

def after_start():
${indent(p.afterStart ?? 'pass')}

def on_shutdown():
${indent(p.onShutdown ?? 'sys.exit(0)')}

while True:
    m = rd()
    meth = m.get("method")
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"protocol": 1}})
    elif meth == "start":
        ids = set()
        for i, (rm, rp) in enumerate(REG):
            send({"jsonrpc": "2.0", "id": 1000 + i, "method": rm, "params": rp})
            ids.add(1000 + i)
        while ids:
            r = rd()
            if r.get("id") in ids:
                ids.discard(r["id"])
                if "error" in r:
                    sys.stderr.write("refused: %s\\n" % r["error"]["message"])
                    sys.stderr.flush()
        send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
        after_start()
    elif meth == "tool.call":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": tool(m["params"]["name"], m["params"]["args"])}})
    elif meth == "stage.run":
        s = stage(m["params"])
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"set": s} if s else {}})
    elif meth == "shutdown":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
        on_shutdown()
`;
}

/** A register_tool pair for a tool taking no arguments. */
export function toolReg(name: string): [string, Record<string, unknown>] {
  return ['register_tool', { name, description: `${name}. Example: {}`, parameters: { type: 'object', properties: {}, additionalProperties: false } }];
}
