/**
 * Byte framing: lines split at any byte (including inside a UTF-8 character)
 * are joined before decoding and handed on exactly once, NDJSON and SSE alike.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineSplitter, NdjsonFramer, SseFramer, type Frame, type Framer } from '../../src/providers/framing.js';

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });

function run(f: Framer, parts: Uint8Array[]): string[] {
  const frames: Frame[] = [];
  for (const p of parts) frames.push(...f.push(p));
  frames.push(...f.end());
  return frames.map((fr) => (fr.kind === 'done' ? '[DONE]' : fr.kind === 'skipped' ? '[SKIPPED]' : dec.decode(fr.bytes)));
}

function splitEverywhere(bytes: Uint8Array, check: (parts: Uint8Array[]) => void): void {
  for (let i = 0; i <= bytes.length; i++) {
    for (let j = i; j <= bytes.length; j += 7) check([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
  }
}

test('你好 split inside 好 (E5 | A5 BD) across reads arrives whole', () => {
  const line = enc.encode('{"content":"你好"}\n');
  const hao = line.indexOf(0xe5);
  assert.equal(line[hao + 1], 0xa5);
  const out = run(new NdjsonFramer(), [line.subarray(0, hao + 1), line.subarray(hao + 1)]);
  assert.deepEqual(out, ['{"content":"你好"}']);
});

test('NDJSON: every split position of a multi-line stream gives the same lines, once each', () => {
  const text = '{"a":"你好"}\n{"b":"世界🌏"}\r\n\n{"c":3}';
  const want = ['{"a":"你好"}', '{"b":"世界🌏"}', '{"c":3}'];
  splitEverywhere(enc.encode(text), (parts) => assert.deepEqual(run(new NdjsonFramer(), parts), want));
});

test('SSE: data lines, comments, multi-line data, CRLF and [DONE] at every split', () => {
  const text = ': keep-alive\r\ndata: {"x":"你"}\r\n\r\nevent: message\ndata: {"y":\ndata: "好"}\n\ndata:[DONE]\n\n';
  const want = ['{"x":"你"}', '{"y":\n"好"}', '[DONE]'];
  splitEverywhere(enc.encode(text), (parts) => assert.deepEqual(run(new SseFramer(), parts), want));
});

test('SSE: an event without the closing blank line is dispatched at end of stream; garbage lines are ignored', () => {
  assert.deepEqual(run(new SseFramer(), [enc.encode('garbage here\ndata: {"a":1}\n\ndata: {"b":2}')]), ['{"a":1}', '{"b":2}']);
});

test('LineSplitter: one byte at a time', () => {
  const s = new LineSplitter();
  const bytes = enc.encode('ab\n你\n\nz');
  const lines: string[] = [];
  for (const b of bytes) for (const l of s.push(Uint8Array.of(b))) lines.push(dec.decode(l));
  const last = s.end();
  if (last) lines.push(dec.decode(last));
  assert.deepEqual(lines, ['ab', '你', '', 'z']);
});

test('a line or SSE event over the frame limit is dropped as it arrives and becomes one skipped frame; the frames around it arrive whole', () => {
  const big = 'x'.repeat(5000);
  for (const [framer, body, want] of [
    [() => new NdjsonFramer(1000), `{"a":1}\n{"big":"${big}"}\n{"b":2}\n{"c":"${big}"}`, ['{"a":1}', '[SKIPPED]', '{"b":2}', '[SKIPPED]']],
    [() => new SseFramer(1000), `data: {"a":1}\n\ndata: {"big":"${big}"}\n\ndata: {"b":2}\ndata: ${big}\n\ndata: [DONE]\n\n`, ['{"a":1}', '[SKIPPED]', '[SKIPPED]', '[DONE]']],
  ] as const) {
    const bytes = enc.encode(body);
    // whole, and in reads of 1, 7 and 300 bytes: never more than the limit is held
    for (const size of [bytes.length, 1, 7, 300]) {
      const f = framer();
      const parts: Uint8Array[] = [];
      for (let o = 0; o < bytes.length; o += size) parts.push(bytes.subarray(o, o + size));
      assert.deepEqual(run(f, parts), [...want], `reads of ${size}`);
    }
  }
  const l = new LineSplitter(1000);
  l.push(enc.encode('y'.repeat(999)));
  l.push(enc.encode('y'.repeat(5000)));
  assert.equal(l.pending, 0, 'an over-long line is not held');
});
