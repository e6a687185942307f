/**
 * `homeagent doctor`: checks what the box depends on and says what to fix for
 * each failure — audio devices, GPIO access, the MQTT broker, each LLM source
 * (reachable, model present, supports tools), disk space, database
 * integrity. Every check has a time limit and never throws.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, statfsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import mqtt from 'mqtt';
import { errorMessage } from '../kernel/errors.js';
import { SETTINGS_STORE } from '../config/registry.js';
import { RUN_LOG_STORE } from '../kernel/run-log.js';
import { MEMORY_STORE } from '../memory/db.js';
import { TIMERS_STORE } from '../plugins/timers/timer-service.js';

/** One check's outcome. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

/** What the doctor needs to know. */
export interface DoctorInput {
  dataDir: string;
  /** MQTT broker URL, or undefined when the embedded broker is used. */
  brokerUrl?: string;
  brokerUsername?: string;
  brokerPassword?: string;
  /** LLM sources in order. */
  sources: Array<{ name: string; adapter: string; base_url: string; model: string; api_key?: string }>;
  /** sysfs root for GPIO (tests). */
  sysfsRoot?: string;
  /** Free-space threshold, bytes (default 200 MB). */
  minFreeBytes?: number;
  fetchImpl?: typeof fetch;
}

function run(cmd: string, args: string[], timeoutMs = 5000): Promise<{ code: number | null; stdout: string; stderr: string; error?: NodeJS.ErrnoException }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      const e = error as (NodeJS.ErrnoException & { code?: number | string }) | null;
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : -1) : 0, stdout, stderr, ...(e ? { error: e } : {}) });
    });
  });
}

/** Audio: sound cards for playback and capture. */
export async function checkAudio(): Promise<DoctorCheck[]> {
  const out: DoctorCheck[] = [];
  for (const [tool, what] of [['aplay', 'playback'], ['arecord', 'capture']] as const) {
    const r = await run(tool, ['-l']);
    if (r.error?.code === 'ENOENT') {
      out.push({ name: `audio ${what}`, ok: false, detail: `${tool} is not installed`, fix: 'apt-get install alsa-utils' });
      continue;
    }
    const cards = (r.stdout.match(/^card \d+:/gm) ?? []).length;
    out.push(
      cards > 0
        ? { name: `audio ${what}`, ok: true, detail: `${cards} ${what} device(s)` }
        : { name: `audio ${what}`, ok: false, detail: `no ${what} device found; the simulated ${what === 'playback' ? 'speaker' : 'microphone'} is used`, fix: `plug in a USB ${what === 'playback' ? 'speaker' : 'microphone'} or enable the audio HAT's overlay in /boot/firmware/config.txt, then check \`${tool} -l\`; the service user must be in the audio group` },
    );
  }
  return out;
}

/** GPIO: sysfs export is writable (gpio group) or a gpiochip device is accessible. */
export function checkGpio(sysfsRoot = '/sys'): DoctorCheck {
  const gpio = path.join(sysfsRoot, 'class', 'gpio');
  if (!existsSync(gpio)) return { name: 'gpio', ok: false, detail: `${gpio} does not exist (no GPIO on this machine); the simulated buttons and LEDs are used`, fix: 'on a Raspberry Pi, use a kernel with sysfs GPIO (Raspberry Pi OS Bookworm has it)' };
  const chips = readdirSync(gpio).filter((n) => n.startsWith('gpiochip'));
  try {
    accessSync(path.join(gpio, 'export'), constants.W_OK);
    return { name: 'gpio', ok: true, detail: `${chips.length} gpio chip(s); export is writable` };
  } catch {
    return { name: 'gpio', ok: false, detail: `${path.join(gpio, 'export')} is not writable by this user`, fix: 'add the service user to the gpio group (usermod -aG gpio homeagent) and install systemd/99-homeagent-gpio.rules into /etc/udev/rules.d' };
  }
}

/** The MQTT broker answers a CONNECT within 5 s. */
export async function checkBroker(url: string | undefined, username?: string, password?: string): Promise<DoctorCheck> {
  if (!url) return { name: 'mqtt broker', ok: true, detail: 'no broker configured: the embedded broker on 127.0.0.1 is used' };
  return new Promise((resolve) => {
    const client = mqtt.connect(url, { connectTimeout: 5000, reconnectPeriod: 0, clientId: `homeagent-doctor-${process.pid}-${Date.now()}`, ...(username ? { username, password } : {}) });
    const done = (c: DoctorCheck) => {
      client.end(true);
      resolve(c);
    };
    const timer = setTimeout(() => done({ name: 'mqtt broker', ok: false, detail: `${url}: no answer within 5 s`, fix: 'check plugin.mqtt.url, that the broker runs (systemctl status mosquitto) and that the network/firewall lets port 1883 through' }), 5500);
    client.once('connect', () => {
      clearTimeout(timer);
      done({ name: 'mqtt broker', ok: true, detail: `${url}: connected` });
    });
    client.once('error', (err) => {
      clearTimeout(timer);
      const auth = /not authorized|bad user/i.test(err.message);
      done({ name: 'mqtt broker', ok: false, detail: `${url}: ${err.message}`, fix: auth ? 'set plugin.mqtt.username and plugin.mqtt.password to an account the broker accepts' : 'check plugin.mqtt.url and that the broker is running' });
    });
  });
}

/** One LLM source: reachable, model present, supports tools (Ollama /api/show capabilities). */
export async function checkLlmSource(src: DoctorInput['sources'][number], fetchImpl: typeof fetch = fetch): Promise<DoctorCheck> {
  const name = `llm source ${src.name}`;
  const base = src.base_url.replace(/\/+$/, '');
  const headers: Record<string, string> = src.api_key ? { Authorization: `Bearer ${src.api_key}` } : {};
  const get = async (p: string, init?: RequestInit) => {
    const ctl = AbortSignal.timeout(5000);
    return fetchImpl(base + p, { ...init, headers: { ...headers, ...(init?.headers as Record<string, string>) }, signal: ctl });
  };
  try {
    if (src.adapter === 'ollama') {
      const tags = await get('/api/tags');
      if (!tags.ok) return { name, ok: false, detail: `${base}/api/tags answered HTTP ${tags.status}`, fix: 'check core.llm.sources.' + src.name + '.base_url' };
      const body = (await tags.json()) as { models?: Array<{ name: string; model?: string }> };
      const models = (body.models ?? []).map((m) => m.name);
      const present = models.some((m) => m === src.model || m === `${src.model}:latest`);
      if (!present) return { name, ok: false, detail: `model ${src.model} is not on ${base} (has: ${models.join(', ') || 'none'})`, fix: `ollama pull ${src.model}` };
      const show = await get('/api/show', { method: 'POST', body: JSON.stringify({ model: src.model }), headers: { 'Content-Type': 'application/json' } });
      const info = show.ok ? ((await show.json()) as { capabilities?: string[] }) : {};
      if (info.capabilities && !info.capabilities.includes('tools')) return { name, ok: false, detail: `${src.model} does not support tools; device control by the LLM will not work (local intents still do)`, fix: 'choose a model with tool support, e.g. qwen2.5 or llama3.1' };
      return { name, ok: true, detail: `${base}: ${src.model} present${info.capabilities ? ', supports tools' : ''}` };
    }
    const r = await get('/models');
    if (r.status === 401 || r.status === 403) return { name, ok: false, detail: `${base}: HTTP ${r.status} (key refused)`, fix: `set core.llm.sources.${src.name}.api_key` };
    if (!r.ok) return { name, ok: false, detail: `${base}/models answered HTTP ${r.status}`, fix: `check core.llm.sources.${src.name}.base_url` };
    const body = (await r.json()) as { data?: Array<{ id: string }> };
    const ids = (body.data ?? []).map((m) => m.id);
    if (ids.length && !ids.includes(src.model)) return { name, ok: false, detail: `model ${src.model} not offered by ${base}`, fix: `set core.llm.sources.${src.name}.model to one of: ${ids.slice(0, 8).join(', ')}` };
    return { name, ok: true, detail: `${base}: reachable, ${src.model}` };
  } catch (err) {
    return { name, ok: false, detail: `${base}: ${errorMessage(err)}`, fix: src.adapter === 'ollama' ? 'start Ollama (systemctl start ollama) or point core.llm.sources.' + src.name + '.base_url at a running one' : 'check the host is reachable from the box' };
  }
}

/** Free space on the data directory's file system. */
export function checkDisk(dataDir: string, minFree = 200 * 1024 * 1024): DoctorCheck {
  try {
    const s = statfsSync(dataDir);
    const free = s.bavail * s.bsize;
    const mb = Math.round(free / 1048576);
    return free >= minFree ? { name: 'disk space', ok: true, detail: `${mb} MB free in ${dataDir}` } : { name: 'disk space', ok: false, detail: `only ${mb} MB free in ${dataDir}`, fix: 'free space (journalctl --vacuum-size=50M, remove old releases in /opt/homeagent/releases)' };
  } catch (err) {
    return { name: 'disk space', ok: false, detail: errorMessage(err), fix: `create ${dataDir} and give the service user write access` };
  }
}

/** The schema version this release writes, per database file (src/kernel/store-version.ts). */
const STORE_VERSIONS: Readonly<Record<string, number>> = {
  'memory.db': MEMORY_STORE.version,
  'runlog.db': RUN_LOG_STORE.version,
  'settings.db': SETTINGS_STORE.version,
  'timers.db': TIMERS_STORE.version,
};

/**
 * SQLite integrity and schema version (`PRAGMA user_version`) of every
 * database in the data directory; a store newer than this release supports
 * fails with the rollback as the fix.
 */
export function checkDatabases(dataDir: string): DoctorCheck[] {
  let files: string[] = [];
  try {
    files = readdirSync(dataDir).filter((f) => f.endsWith('.db'));
  } catch {
    return [{ name: 'databases', ok: false, detail: `cannot read ${dataDir}`, fix: 'check the data directory permissions' }];
  }
  return files.map((f) => {
    try {
      const db = new Database(path.join(dataDir, f), { readonly: true, fileMustExist: true });
      const r = String(db.pragma('integrity_check', { simple: true }));
      const version = Number(db.pragma('user_version', { simple: true }));
      db.close();
      const supported = STORE_VERSIONS[f];
      if (r === 'ok' && supported !== undefined && version > supported) {
        return { name: `database ${f}`, ok: false, detail: `schema version ${version}, newer than this release supports (${supported})`, fix: 'it was written by a newer release: start that one again, or run "sudo homeagent rollback" from it' };
      }
      return r === 'ok' ? { name: `database ${f}`, ok: true, detail: `integrity ok, schema version ${version}` } : { name: `database ${f}`, ok: false, detail: r, fix: `stop the service, back up ${f}, and run sqlite3 ${f} ".recover" into a new file` };
    } catch (err) {
      return { name: `database ${f}`, ok: false, detail: errorMessage(err), fix: `stop the service and check ${f}` };
    }
  });
}

/** Run every check. */
export async function runDoctor(input: DoctorInput): Promise<{ ok: boolean; checks: DoctorCheck[] }> {
  const checks: DoctorCheck[] = [];
  checks.push(...(await checkAudio()));
  checks.push(checkGpio(input.sysfsRoot));
  checks.push(await checkBroker(input.brokerUrl, input.brokerUsername, input.brokerPassword));
  for (const s of input.sources) checks.push(await checkLlmSource(s, input.fetchImpl));
  if (input.sources.length === 0) checks.push({ name: 'llm sources', ok: false, detail: 'no LLM source configured', fix: 'homeagent config set core.llm.sources.ollama.base_url http://HOST:11434' });
  checks.push(checkDisk(input.dataDir, input.minFreeBytes));
  checks.push(...checkDatabases(input.dataDir));
  return { ok: checks.every((c) => c.ok), checks };
}
