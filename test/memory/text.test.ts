/**
 * Pure text rules: tokenizer terms, keywords, the rule distiller in both
 * languages, query time ranges and bigram-Jaccard merge candidates.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { jaccard, keywords, nameBigrams, ruleTriples, terms } from '../../src/memory/index.js';
import { asksWhen, mentionsTime, queryTimeRange, zoneOffsetMs } from '../../src/memory/time-query.js';
import { makeMemory, tempDir } from './helpers.js';

it('tokenizes Chinese into bigrams and jieba words, English into stemmed non-stop words', () => {
  const zh = terms('我住在北京海淀区');
  assert.ok(zh.includes('北京') && zh.includes('海淀') && zh.includes('w:海淀区'));
  assert.deepEqual(terms('The kids were painting sunsets'), ['kid', 'paint', 'sunset']);
  assert.ok(keywords('我喜欢打羽毛球').includes('羽毛球'));
  assert.ok(!keywords('what do you like about the garden').includes('the'));
});

it('distils personal facts in Chinese and English', () => {
  const zh = ruleTriples('我叫李雷，我住在杭州西湖区。我喜欢爬山，我今年二十八岁，我的工作是医生。').map((t) => `${t.subject}|${t.relation}|${t.object}`);
  assert.deepEqual(zh, ['家里某人|名字是|李雷', '家里某人|住在|杭州西湖区', '家里某人|喜欢|爬山', '家里某人|年龄|二十八岁', '家里某人|工作是|医生']);
  const en = ruleTriples("Hi, I'm 30 years old, I live in Leeds and I work as a teacher.", 'Anna').map((t) => `${t.subject}|${t.relation}|${t.object}`);
  assert.deepEqual(en, ['Anna|lives_in|Leeds', 'Anna|age|30 years old', 'Anna|works_as|teacher']);
  assert.deepEqual(ruleTriples('what is the weather like'), []);
});

it('reads the time range a query names', () => {
  const now = Date.UTC(2023, 9, 20, 12);
  assert.deepEqual(queryTimeRange('What did she paint on October 13, 2023?', now), { from: Date.UTC(2023, 9, 13), to: Date.UTC(2023, 9, 14) });
  assert.deepEqual(queryTimeRange('2023年5月8日我们聊了什么', now), { from: Date.UTC(2023, 4, 8), to: Date.UTC(2023, 4, 9) });
  assert.deepEqual(queryTimeRange('in May 2023', now), { from: Date.UTC(2023, 4, 1), to: Date.UTC(2023, 5, 1) });
  assert.deepEqual(queryTimeRange('我昨天说了什么', now), { from: Date.UTC(2023, 9, 19), to: Date.UTC(2023, 9, 20) });
  assert.equal(queryTimeRange('what is my name', now), undefined);
  // Without the year: the latest such month or day that has begun; "may" as a verb is not a month.
  assert.deepEqual(queryTimeRange('When did Melanie go camping in June?', now), { from: Date.UTC(2023, 5, 1), to: Date.UTC(2023, 6, 1) });
  assert.deepEqual(queryTimeRange('what did we do in December?', now), { from: Date.UTC(2022, 11, 1), to: Date.UTC(2023, 0, 1) });
  assert.deepEqual(queryTimeRange('what did they give him on Aug 15th?', now), { from: Date.UTC(2023, 7, 15), to: Date.UTC(2023, 7, 16) });
  assert.deepEqual(queryTimeRange('the picture shared on December 1,2022', now), { from: Date.UTC(2022, 11, 1), to: Date.UTC(2022, 11, 2) });
  assert.deepEqual(queryTimeRange('which trips did he take in 2022?', now), { from: Date.UTC(2022, 0, 1), to: Date.UTC(2023, 0, 1) });
  assert.equal(queryTimeRange('I may 5 times have said it', now), undefined);
  // partialDates off (the LoCoMo bench's ablation): only full dates and relative ones are read.
  assert.equal(queryTimeRange('When did Melanie go camping in June?', now, 0, { partialDates: false }), undefined);
  assert.equal(queryTimeRange('which trips did he take in 2022?', now, 0, { partialDates: false }), undefined);
  assert.deepEqual(queryTimeRange('in May 2023', now, 0, { partialDates: false }), { from: Date.UTC(2023, 4, 1), to: Date.UTC(2023, 5, 1) });
});

it('tells a question asking when and a turn saying when', () => {
  assert.ok(asksWhen('When did Caroline pass the adoption interview?'));
  assert.ok(asksWhen('How long has Melanie been practicing art?'));
  assert.ok(!asksWhen('What did Caroline do when she was young?'));
  assert.ok(mentionsTime('I passed the interviews last Friday!'));
  assert.ok(mentionsTime('I started painting two years ago'));
  assert.ok(mentionsTime('We went there in May'));
  assert.ok(!mentionsTime('I may go camping'));
  assert.ok(!mentionsTime('We march for our rights'));
});

it('reads parts of a day in the household\'s time zone', () => {
  const now = Date.UTC(2026, 11, 1, 15);
  const h = (d: number, hour: number) => Date.UTC(2026, 11, d, hour);
  assert.deepEqual(queryTimeRange('what did the camera see this morning?', now), { from: h(1, 5), to: h(1, 12) });
  assert.deepEqual(queryTimeRange('anything this afternoon', now), { from: h(1, 12), to: h(1, 18) });
  assert.deepEqual(queryTimeRange('who came last night', now), { from: h(0, 18), to: h(1, 6) });
  assert.deepEqual(queryTimeRange('yesterday morning', now), { from: h(0, 5), to: h(0, 12) });
  assert.deepEqual(queryTimeRange('今天早上摄像头拍到了什么', now), { from: h(1, 5), to: h(1, 12) });
  // Berlin is UTC+1 in December: its morning is 04:00-11:00 UTC; at 23:30 UTC it is already tomorrow there.
  const berlin = zoneOffsetMs('Europe/Berlin', now);
  assert.equal(berlin, 3_600_000);
  assert.deepEqual(queryTimeRange('this morning', now, berlin), { from: h(1, 4), to: h(1, 11) });
  assert.deepEqual(queryTimeRange('this morning', Date.UTC(2026, 11, 1, 23, 30), berlin), { from: h(2, 4), to: h(2, 11) });
  assert.equal(zoneOffsetMs('America/New_York', Date.UTC(2026, 6, 1)), -4 * 3_600_000);
});

it('proposes same-type entities whose name bigrams reach the Jaccard threshold', async () => {
  assert.equal(jaccard(nameBigrams('王小明'), nameBigrams('王小明同学')), 0.5);
  const { dir, cleanup } = tempDir();
  const queue: string[] = [];
  const mem = makeMemory({ dir, enqueue: (t) => queue.push(t) });
  try {
    mem.graph.commit(
      [
        { subject: '王小明', subject_type: 'person', relation: '上', object: '三年级' },
        { subject: '王小明同学', subject_type: 'person', relation: '喜欢', object: '足球' },
        { subject: '小明湖', subject_type: 'place', relation: '在', object: '城东' },
      ],
      mem.now(),
    );
    await mem.runLoopOnce('merge');
    assert.equal(queue.length, 1, queue.join('\n'));
    assert.match(queue[0]!, /「王小明」[\s\S]*「王小明同学」|「王小明同学」[\s\S]*「王小明」/);
    assert.match(queue[0]!, /Jaccard 0\.50/);
  } finally {
    mem.close();
    cleanup();
  }
});
