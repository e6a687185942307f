/**
 * Test fakes for the memory suites: an in-memory SettingsAPI, a silent
 * logger, a synthetic ToolContext and temp data directories (time: the
 * kernel's FakeClock).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../src/kernel/log-types.js';
import type { SettingDef, SettingsAPI } from '../../src/kernel/settings-types.js';
import type { ToolContext, ToolDef } from '../../src/kernel/stage-types.js';
import type { InputMessage } from '../../src/kernel/turn-types.js';
import { ToolRegistry } from '../../src/kernel/tool-registry.js';
import type { Clock } from '../../src/kernel/clock.js';
import { MemorySystem } from '../../src/memory/index.js';

/** A SettingsAPI backed by a Map, honouring registered defaults. */
export function fakeSettings(overrides: Record<string, unknown> = {}): SettingsAPI {
  const defs = new Map<string, SettingDef>();
  const values = new Map<string, unknown>(Object.entries(overrides));
  const subs: Array<{ prefix: string; cb: (k: string, v: unknown) => void }> = [];
  return {
    get<T = unknown>(key: string): T {
      return (values.has(key) ? values.get(key) : defs.get(key)?.default) as T;
    },
    set(key, value) {
      values.set(key, value);
      for (const s of subs) if (key.startsWith(s.prefix)) s.cb(key, value);
    },
    list(prefix = '') {
      return [...defs.values()]
        .filter((d) => d.key.startsWith(prefix))
        .map((d) => ({ key: d.key, value: values.get(d.key) ?? d.default, type: d.type, description: d.description, source: values.has(d.key) ? ('stored' as const) : ('default' as const) }));
    },
    delete(key) {
      values.delete(key);
    },
    register(def) {
      defs.set(def.key, def);
    },
    onChange(prefix, cb) {
      const s = { prefix, cb };
      subs.push(s);
      return () => subs.splice(subs.indexOf(s), 1);
    },
  };
}

/** A logger that records error/warn messages. */
export function quietLog(): Logger & { errors: unknown[] } {
  const errors: unknown[] = [];
  const log: Logger & { errors: unknown[] } = {
    errors,
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (obj) => {
      errors.push(obj);
    },
    child: () => log,
  };
  return log;
}

/** A temp directory removed by the returned cleanup. */
export function tempDir(prefix = 'ha-mem-'): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A synthetic ToolContext for calling handlers directly. */
export function toolCtx(text = 'test'): ToolContext {
  const input: InputMessage = { id: 'in-1', source: 'test', channel: 'console', text, kind: 'queued', level: 0, received_at: Date.now() };
  return { input, signal: new AbortController().signal, call_id: 'call_1' };
}

const registries = new WeakMap<ToolDef[], ToolRegistry>();

/**
 * Call a tool of `tools` by name as the kernel does: its arguments are first
 * validated by the tool registry (ajv against the tool's schema; a bad
 * argument throws ToolArgumentsError, code TOOL_ARGUMENTS_INVALID), then the
 * handler runs and its typed errors are thrown as they are.
 */
export async function callTool(tools: ToolDef[], name: string, args: Record<string, unknown>): Promise<unknown> {
  let reg = registries.get(tools);
  if (!reg) {
    reg = new ToolRegistry(quietLog());
    for (const t of tools) reg.register('_memory_', t);
    registries.set(tools, reg);
  }
  const invalid = reg.validate(name, args);
  if (invalid) throw invalid;
  return reg.get(name)!.handler(args, toolCtx());
}

/** Build a MemorySystem over a temp dir with fakes; returns it with its helpers. */
export function makeMemory(opts: { dir: string; clock?: Pick<Clock, 'now'>; enqueue?: (t: string) => void; settings?: SettingsAPI; seedDir?: string; sliceBudgetMs?: number }): MemorySystem {
  return new MemorySystem({
    dataDir: opts.dir,
    settings: opts.settings ?? fakeSettings(),
    log: quietLog(),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.enqueue ? { enqueueConsolidation: opts.enqueue } : {}),
    knowledgeSeedDir: opts.seedDir ?? path.join(opts.dir, 'no-seeds'),
    ...(opts.sliceBudgetMs !== undefined ? { sliceBudgetMs: opts.sliceBudgetMs } : {}),
  });
}

let n = 0;
/** A unique event id. */
export function eid(): string {
  return `ev-${++n}`;
}

/**
 * Run `script dir` as a child process (tsx), read its stdout, and kill it
 * with SIGKILL once `target` lines match `ack` (a crash at an arbitrary
 * point of its work). Resolves with everything it wrote, after it is gone.
 * Rejects when it exits by itself first or is not there within `deadlineMs`.
 */
export async function killAfterAcks(script: string, dir: string, ack: RegExp, target: number, deadlineMs: number): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const global = new RegExp(ack.source, ack.flags.includes('g') ? ack.flags : `${ack.flags}g`);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child too slow; output so far: ${out.slice(-200)}`));
    }, deadlineMs);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if ((out.match(global) ?? []).length >= target) {
        child.kill('SIGKILL');
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') {
        clearTimeout(timer);
        reject(new Error(`child exited early: ${code} ${signal}`));
      }
    });
  });
  await new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.on('exit', () => resolve())));
  return out;
}
