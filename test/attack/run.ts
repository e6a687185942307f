/**
 * `npm run attack`: the service attacked as a tester would (issue 14). Each
 * attack starts its own service process (box.ts: the current sources,
 * compiled), its own Mosquitto and LLM test server on free 127.0.0.1 ports
 * (never 1883), runs, and cleans everything up even when it fails. Each
 * figure is printed as `attack.<name>: <value> <unit> (pass <rule>) ok|FAIL`
 * with `#` lines for details; the exit code is 1 when any figure fails or
 * could not be measured.
 *
 * `npm run attack -- NAME...` runs only the named attacks:
 * mqtt-flood, stream-faults, socket-abuse, bad-wavs, huge-reply, broker-restart.
 */
import { prepareService } from './box.js';
import { formatFigure, unmeasured, type Figure } from './report.js';
import { Scope } from './world.js';

/** One attack: its module, the figures it reports (so a crash still prints them as failed), its time budget. */
interface AttackDef {
  name: string;
  load: () => Promise<{ run(scope: Scope, note: (s: string) => void): Promise<Figure[]> }>;
  figures: Array<[name: string, unit: string, rule: string]>;
  budgetMs: number;
}

const ATTACKS: AttackDef[] = [
  {
    name: 'mqtt-flood',
    load: () => import('./mqtt-flood.js'),
    figures: [
      ['mqtt_flood_devices_lost', 'devices', '0'],
      ['junk_devices_kept', 'devices', '0'],
      ['out_of_range_values_taken', 'values', '0'],
      ['mqtt_flood_warnings', 'lines', '1..messages/10'],
    ],
    budgetMs: 120_000,
  },
  {
    name: 'stream-faults',
    load: () => import('./stream-faults.js'),
    figures: [
      ['stream_faults_text_lost', 'streams', '0'],
      ['stream_faults_sources_failed', 'streams', '0'],
    ],
    budgetMs: 150_000,
  },
  {
    name: 'socket-abuse',
    load: () => import('./socket-abuse.js'),
    figures: [
      ['socket_clients_unanswered', 'clients', '0'],
      ['socket_bad_requests_unanswered', 'requests', '0'],
      ['socket_service_down', 'times', '0'],
    ],
    budgetMs: 90_000,
  },
  {
    name: 'bad-wavs',
    load: () => import('./bad-wavs.js'),
    figures: [
      ['bad_wavs_untyped', 'files', '0'],
      ['bad_wavs_service_down', 'times', '0'],
      ['bad_wavs_rss_mb', 'MB', '< 300'],
    ],
    budgetMs: 90_000,
  },
  {
    name: 'huge-reply',
    load: () => import('./huge-reply.js'),
    figures: [
      ['huge_reply_rss_mb', 'MB', '< 300'],
      ['huge_reply_runlog_growth_mb', 'MB', '< 5'],
      ['huge_reply_memory_growth_mb', 'MB', '< 5'],
    ],
    budgetMs: 120_000,
  },
  {
    name: 'broker-restart',
    load: () => import('./broker-restart.js'),
    figures: [
      ['reconnect_ms', 'ms', '< 2500'],
      ['outage_reply_unnamed', 'replies', '0'],
    ],
    budgetMs: 90_000,
  },
];

async function main(): Promise<number> {
  const wanted = process.argv.slice(2).filter((a) => a !== '--');
  const unknown = wanted.filter((w) => !ATTACKS.some((a) => a.name === w));
  if (unknown.length) {
    console.error(`unknown attack: ${unknown.join(', ')}; available: ${ATTACKS.map((a) => a.name).join(', ')}`);
    return 2;
  }
  const started = Date.now();
  console.log('# building the service for the attacks (tsc into a private directory)');
  prepareService();
  const all: Figure[] = [];
  for (const a of ATTACKS.filter((x) => !wanted.length || wanted.includes(x.name))) {
    console.log(`# attack ${a.name}`);
    const scope = new Scope();
    const t0 = Date.now();
    let figures: Figure[];
    let timer: NodeJS.Timeout | undefined;
    try {
      const mod = await a.load();
      figures = await Promise.race([
        mod.run(scope, (s) => console.log(`# ${s}`)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`took longer than its budget of ${a.budgetMs / 1000} s`)), a.budgetMs);
        }),
      ]);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      figures = [];
      console.log(`# attack ${a.name} failed: ${why}`);
      for (const [name, unit, rule] of a.figures) figures.push(unmeasured(name, unit, rule, why.split('\n')[0]!));
    } finally {
      clearTimeout(timer);
      await scope.close();
    }
    for (const f of figures) console.log(formatFigure(f));
    console.log(`# attack ${a.name} took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    all.push(...figures);
  }
  const failed = all.filter((f) => !f.ok);
  console.log(`# ${all.length - failed.length} of ${all.length} figures pass; ${((Date.now() - started) / 1000).toFixed(0)} s${failed.length ? `; failing: ${failed.map((f) => f.name).join(', ')}` : ''}`);
  return failed.length ? 1 : 0;
}

process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
