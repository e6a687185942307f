/**
 * The Lua VM: JSON codec (bytes, integers), sandbox, instruction budget,
 * AdapterError with script and line, http_get/http_post through the host
 * without blocking the event loop.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LuaVM } from '../../src/lua/vm.js';
import { AdapterError } from '../../src/lua/errors.js';
import { captureLogger } from './helpers.js';

function vmWith(src: string, opts: Partial<ConstructorParameters<typeof LuaVM>[0]> = {}): LuaVM {
  const vm = new LuaVM({ name: 'adapters/test.lua', ...opts });
  vm.load(src);
  return vm;
}

test('json: Chinese text round-trips byte for byte, whole numbers stay integers', () => {
  const vm = vmWith(`
    local m = {}
    function m.rt(s) local t = json.decode(s); t.f = t.n * 1.0; t.big = 3000000000; t.half = 2.5; return json.encode(t) end
    function m.info(s) local t = json.decode(s); return { type = math.type(t.n), len = #t.s, first = t.s:byte(1) } end
    function m.cat(s) local t = json.decode(s); return t.a .. t.b end
    return m`);
  const out = vm.callSync('rt', ['{"s":"你好，世界 🌏","n":256,"e":[],"o":{},"z":null}']) as string;
  assert.equal(out, '{"s":"你好，世界 🌏","n":256,"e":[],"o":{},"z":null,"f":256,"big":3000000000,"half":2.5}');
  assert.ok(!out.includes('256.0'));
  assert.deepEqual(vm.callSync('info', ['{"s":"你好","n":256}']), { type: 'integer', len: 6, first: 0xe4 });
  // concatenating byte strings in Lua keeps them intact
  assert.equal(vm.callSync('cat', ['{"a":"你","b":"好"}']), '你好');
});

test('json: arrays, empty arrays and key order survive; json.array marks an empty table', () => {
  const vm = vmWith(`
    return {
      f = function(s) return json.encode(json.decode(s)) end,
      g = function() return json.encode({ list = json.array(), obj = {}, seq = {1, 2, 3} }) end,
    }`);
  const src = '{"z":1,"a":[1,[],{"k":[]}],"m":{"y":true,"b":false}}';
  assert.equal(vm.callSync('f', [src]), src);
  assert.deepEqual(JSON.parse(vm.callSync('g', []) as string), { list: [], obj: {}, seq: [1, 2, 3] });
});

test('json.decode of invalid JSON is an AdapterError naming script and line', () => {
  const vm = vmWith(`local m = {}\nfunction m.bad(s)\n  return json.decode(s)\nend\nreturn m`);
  assert.throws(
    () => vm.callSync('bad', ['{"a":']),
    (err: unknown) => err instanceof AdapterError && err.code === 'ADAPTER_RUNTIME' && err.script === 'adapters/test.lua' && err.line === 3 && /json\.decode/.test(err.message),
  );
});

test('a Lua runtime error names the script and the line', () => {
  const vm = vmWith(`local m = {}\n\nfunction m.f(x)\n  local t = nil\n  return t.field\nend\nreturn m`);
  assert.throws(
    () => vm.callSync('f', [1]),
    (err: unknown) => err instanceof AdapterError && err.line === 5 && err.message.includes('adapters/test.lua:5') && err.fn === 'f',
  );
  // error() with a table value: the line comes from the traceback
  const vm2 = vmWith(`local m = {}\nfunction m.f()\n  error({ reason = "x" })\nend\nreturn m`);
  assert.throws(() => vm2.callSync('f', []), (err: unknown) => err instanceof AdapterError && err.line === 3 && err.message.includes('reason'));
});

test('a syntax error is ADAPTER_SYNTAX with its line', () => {
  const vm = new LuaVM({ name: 'adapters/broken.lua' });
  assert.throws(
    () => vm.load('local a = {}\nfunction a.f(\n  return 1\nend\nreturn a'),
    (err: unknown) => err instanceof AdapterError && err.code === 'ADAPTER_SYNTAX' && err.line === 3 && err.script === 'adapters/broken.lua',
  );
});

test('sandbox: no io, os.execute, loadfile, dofile, require, string.dump, bytecode', () => {
  const vm = vmWith(`
    return {
      probe = function()
        return {
          io = io == nil, execute = os.execute == nil, getenv = os.getenv == nil, exit = os.exit == nil,
          remove = os.remove == nil, loadfile = loadfile == nil, dofile = dofile == nil,
          require = require == nil, package = package == nil, dump = string.dump == nil, debug = debug == nil,
          time = type(os.time) == "function",
        }
      end,
      bytecode = function()
        local f, err = load("\\27Lua\\83\\0", "x", "b")
        return { loaded = f ~= nil, err = tostring(err) }
      end,
      text = function() local f = load("return 1 + 1"); return f() end,
      reader = function() local f, err = load(function() return nil end); return tostring(err) end,
      rep = function() return string.rep("x", 100000000) end,
    }`);
  assert.deepEqual(vm.callSync('probe', []), {
    io: true, execute: true, getenv: true, exit: true, remove: true, loadfile: true, dofile: true,
    require: true, package: true, dump: true, debug: true, time: true,
  });
  const bc = vm.callSync('bytecode', []) as { loaded: boolean; err: string };
  assert.equal(bc.loaded, false);
  assert.match(bc.err, /binary chunk/);
  assert.equal(vm.callSync('text', []), 2);
  assert.match(vm.callSync('reader', []) as string, /only source text/);
  assert.throws(() => vm.callSync('rep', []), (e: unknown) => e instanceof AdapterError && /16 MiB/.test(e.message));
});

test('instruction budget: an endless loop is stopped with ADAPTER_BUDGET, even inside pcall', () => {
  const vm = vmWith(`
    local m = {}
    function m.spin() while true do end end
    function m.sneaky() while true do pcall(function() while true do end end) end end
    function m.co() local c = coroutine.wrap(function() while true do end end); c() end
    function m.ok() return 42 end
    return m`);
  for (const fn of ['spin', 'sneaky', 'co']) {
    assert.throws(
      () => vm.callSync(fn, []),
      (err: unknown) => err instanceof AdapterError && err.code === 'ADAPTER_BUDGET' && err.script === 'adapters/test.lua' && typeof err.line === 'number',
      fn,
    );
  }
  // the VM is still usable afterwards
  assert.equal(vm.callSync('ok', []), 42);
});

test('instruction budget by count: a small budget stops a long loop deterministically', () => {
  const vm = new LuaVM({ name: 'adapters/count.lua', instructionBudget: 50_000, timeBudgetMs: 60_000 });
  vm.load('return { f = function(n) local s = 0; for i = 1, n do s = s + i end; return s end }');
  assert.equal(vm.callSync('f', [100]), 5050);
  assert.throws(() => vm.callSync('f', [10_000_000]), (e: unknown) => e instanceof AdapterError && e.code === 'ADAPTER_BUDGET');
});

test('log(level, msg) and print reach the logger', () => {
  const log = captureLogger();
  const vm = vmWith(`return { f = function() log("warn", "careful 你好"); print("a", 1) end }`, { log });
  vm.callSync('f', []);
  assert.deepEqual(
    log.lines.map((l) => [l.level, l.msg]),
    [['warn', 'careful 你好'], ['debug', 'a\t1']],
  );
});

test('http_get/http_post: only allowed hosts, results via the host, event loop keeps running', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      if (req.url === '/slow') await gate;
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, url: req.url, body, auth: req.headers.authorization ?? null }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const vm = vmWith(
    `return {
      get = function(u) local b, s = http_get(u); return { body = b, status = s } end,
      post = function(u) local b, s = http_post(u, json.encode({ q = "你好" }), { Authorization = "Bearer k" }); return { body = json.decode(b), status = s } end,
    }`,
    { allowHost: (host) => host === '127.0.0.1' },
  );
  const got = (await vm.call('get', [`http://127.0.0.1:${port}/x`])) as { body: string; status: number };
  assert.equal(got.status, 201);
  assert.equal(JSON.parse(got.body).method, 'GET');
  const posted = (await vm.call('post', [`http://127.0.0.1:${port}/p`])) as { body: { body: string; auth: string }; status: number };
  assert.deepEqual(JSON.parse(posted.body.body), { q: '你好' });
  assert.equal(posted.body.auth, 'Bearer k');

  // not allowed host
  await assert.rejects(vm.call('get', ['http://localhost.invalid:1/']), (e: unknown) => e instanceof AdapterError && /not allowed/.test(e.message));
  // not available in a synchronous call
  assert.throws(() => vm.callSync('get', [`http://127.0.0.1:${port}/x`]), (e: unknown) => e instanceof AdapterError && /synchronous/.test(e.message));

  // while a request is pending, timers and other calls keep running
  const pending = vm.call('get', [`http://127.0.0.1:${port}/slow`]);
  let ticked = false;
  await new Promise<void>((r) => setTimeout(() => { ticked = true; r(); }, 20));
  assert.ok(ticked);
  const other = (await vm.call('get', [`http://127.0.0.1:${port}/fast`])) as { status: number };
  assert.equal(other.status, 201);
  release();
  assert.equal(((await pending) as { status: number }).status, 201);
});

test('http_get: a refused connection returns nil and the error to the script', async () => {
  const vm = vmWith(`return { f = function(u) local b, e = http_get(u); return { b = b == nil, e = e } end }`, { allowHost: () => true });
  const r = (await vm.call('f', ['http://127.0.0.1:1/'])) as { b: boolean; e: string };
  assert.equal(r.b, true);
  assert.equal(typeof r.e, 'string');
});

test('the API conversion path (used when fengari internals differ) gives the same results', () => {
  process.env.HOMEAGENT_LUA_SLOW_CONVERT = '1';
  try {
    const vm = vmWith(`return { rt = function(s) local t = json.decode(s); t.f = t.n * 1.0; return json.encode(t) end, echo = function(x) return x end }`);
    assert.equal(vm.callSync('rt', ['{"s":"你好🌏","n":256,"e":[],"o":{},"z":null}']), '{"s":"你好🌏","n":256,"e":[],"o":{},"z":null,"f":256}');
    assert.deepEqual(vm.callSync('echo', [{ a: [1, { b: '二' }], c: null, d: [] }]), { a: [1, { b: '二' }], c: null, d: [] });
  } finally {
    delete process.env.HOMEAGENT_LUA_SLOW_CONVERT;
  }
});
