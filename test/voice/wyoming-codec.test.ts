import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEvent, WyomingDecoder, audioFormatOf, MAX_HEADER_BYTES } from '../../src/voice/wyoming/codec.js';
import { WyomingProtocolError } from '../../src/voice/errors.js';

test('encode writes header line, data section and payload like the Python reference', () => {
  const payload = Buffer.from([1, 2, 3, 4]);
  const bytes = encodeEvent({ type: 'audio-chunk', data: { rate: 16000, width: 2, channels: 1 }, payload });
  const nl = bytes.indexOf(0x0a);
  const header = JSON.parse(bytes.subarray(0, nl).toString('utf8')) as Record<string, unknown>;
  assert.equal(header.type, 'audio-chunk');
  assert.equal(typeof header.version, 'string');
  const dataLen = header.data_length as number;
  assert.equal(header.payload_length, 4);
  assert.deepEqual(JSON.parse(bytes.subarray(nl + 1, nl + 1 + dataLen).toString('utf8')), { rate: 16000, width: 2, channels: 1 });
  assert.deepEqual(bytes.subarray(nl + 1 + dataLen), payload);
  assert.equal(bytes.length, nl + 1 + dataLen + 4);
});

test('an event without data or payload is one header line', () => {
  const bytes = encodeEvent({ type: 'describe' });
  assert.equal(bytes.indexOf(0x0a), bytes.length - 1);
  assert.equal('data_length' in JSON.parse(bytes.toString('utf8')), false);
});

test('round trip of several events, fed one byte at a time', () => {
  const events = [
    { type: 'transcribe', data: { language: 'zh' } },
    { type: 'audio-start', data: { rate: 16000, width: 2, channels: 1 } },
    { type: 'audio-chunk', data: { rate: 16000, width: 2, channels: 1 }, payload: Buffer.alloc(1000, 7) },
    { type: 'transcript', data: { text: '打开客厅的灯' } },
    { type: 'audio-stop' },
  ];
  const stream = Buffer.concat(events.map((e) => encodeEvent(e)));
  const dec = new WyomingDecoder();
  const got = [];
  for (let i = 0; i < stream.length; i++) got.push(...dec.push(stream.subarray(i, i + 1)));
  assert.equal(got.length, events.length);
  assert.deepEqual(got.map((e) => e.type), events.map((e) => e.type));
  assert.equal(got[3]!.data.text, '打开客厅的灯');
  assert.deepEqual(got[2]!.payload, Buffer.alloc(1000, 7));
  assert.equal(got[4]!.payload, undefined);
  assert.equal(dec.partial, false);
});

test('split reads at every boundary give the same events', () => {
  const stream = Buffer.concat([
    encodeEvent({ type: 'synthesize', data: { text: 'Hello. World!' } }),
    encodeEvent({ type: 'audio-chunk', data: { rate: 22050, width: 2, channels: 1 }, payload: Buffer.from('abcdefgh') }),
  ]);
  for (let cut = 1; cut < stream.length; cut++) {
    const dec = new WyomingDecoder();
    const got = [...dec.push(stream.subarray(0, cut)), ...dec.push(stream.subarray(cut))];
    assert.deepEqual(got.map((e) => e.type), ['synthesize', 'audio-chunk'], `cut at ${cut}`);
    assert.equal(got[1]!.payload!.toString(), 'abcdefgh');
  }
});

test('inline header data is merged with the data section (section wins)', () => {
  const section = Buffer.from(JSON.stringify({ text: 'from section' }));
  const header = JSON.stringify({ type: 'transcript', data: { text: 'inline', language: 'en' }, data_length: section.length }) + '\n';
  const [ev] = new WyomingDecoder().push(Buffer.concat([Buffer.from(header), section]));
  assert.deepEqual(ev!.data, { text: 'from section', language: 'en' });
});

test('bad frames raise WyomingProtocolError with code WYOMING_BAD_FRAME', () => {
  const bad = [
    'not json\n',
    '[1,2]\n',
    '{"data":{}}\n',
    '{"type":"x","payload_length":-1}\n',
    '{"type":"x","data_length":1.5}\n',
    '{"type":"x","data":"str"}\n',
    '{"type":"x","data_length":3}\nabc',
    '{"type":"x","data_length":2}\n[]',
  ];
  for (const b of bad) {
    assert.throws(() => new WyomingDecoder().push(Buffer.from(b)), (err: unknown) => err instanceof WyomingProtocolError && err.code === 'WYOMING_BAD_FRAME', b);
  }
  assert.throws(() => new WyomingDecoder().push(Buffer.alloc(MAX_HEADER_BYTES + 1, 0x41)), WyomingProtocolError);
});

test('partial frame is reported', () => {
  const dec = new WyomingDecoder();
  const full = encodeEvent({ type: 'audio-chunk', data: { rate: 16000, width: 2, channels: 1 }, payload: Buffer.alloc(10) });
  assert.deepEqual(dec.push(full.subarray(0, full.length - 3)), []);
  assert.equal(dec.partial, true);
});

test('audioFormatOf needs rate, width and channels', () => {
  assert.deepEqual(audioFormatOf({ type: 'audio-start', data: { rate: 16000, width: 2, channels: 1 } }), { rate: 16000, width: 2, channels: 1 });
  assert.throws(() => audioFormatOf({ type: 'audio-start', data: { rate: 16000 } }), WyomingProtocolError);
});
