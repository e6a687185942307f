/**
 * The assistant state machine's transition table (src/voice/state-machine.ts):
 * every row is exercised, then the whole flows (a reply, stop, barge-in,
 * follow-up, confirmation, mute) as event sequences. Pure: no clock, no IO.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AssistantStateMachine, TRANSITIONS, findTransition, type StateEvent, type Transition } from '../../src/voice/state-machine.js';
import { ASSISTANT_STATES, legacyAssistantState, type AssistantState } from '../../src/kernel/assistant-state.js';

/** A machine driven into `state` by a realistic prefix of events. */
function machineIn(state: AssistantState): AssistantStateMachine {
  const m = new AssistantStateMachine();
  const go: Record<AssistantState, StateEvent[]> = {
    idle: [],
    listening: [{ event: 'listen_start', listen_id: 'L', answer: false }],
    waiting_for_answer: [{ event: 'listen_start', listen_id: 'L', answer: true }],
    thinking: [{ event: 'turn_start', input_id: 'T', channel: 'console' }],
    speaking: [{ event: 'speech_start' }],
    muted: [{ event: 'mute' }],
    error: [{ event: 'failure', message: 'x' }],
  };
  for (const ev of go[state]) m.dispatch(ev);
  assert.equal(m.state, state, `setup reaches ${state}`);
  return m;
}

/** Feed events, return the states after each. */
function run(m: AssistantStateMachine, events: StateEvent[]): AssistantState[] {
  return events.map((e) => m.dispatch(e));
}

const listen = (id: string, answer = false): StateEvent => ({ event: 'listen_start', listen_id: id, answer });
const ended = (id: string, next: 'turn' | 'message' | 'nothing'): StateEvent => ({ event: 'listen_end', listen_id: id, next });
const turnStart = (id: string, channel = 'speaker'): StateEvent => ({ event: 'turn_start', input_id: id, channel });
const turnEnd = (id: string): StateEvent => ({ event: 'turn_end', input_id: id });
const SPEECH_START: StateEvent = { event: 'speech_start' };
const SPEECH_END: StateEvent = { event: 'speech_end' };

describe('transition table, row by row', () => {
  // [from, events (the last is the one under test), expected state]
  const cases: Array<[AssistantState, StateEvent[], AssistantState, string]> = [
    ['speaking', [{ event: 'stop' }], 'idle', 'stop while speaking'],
    ['listening', [{ event: 'stop' }], 'idle', 'stop while listening'],
    ['thinking', [{ event: 'stop' }], 'idle', 'stop while thinking'],
    ['muted', [{ event: 'stop' }], 'muted', 'stop while muted stays muted'],
    ['speaking', [{ event: 'mute' }], 'speaking', 'a reply under way goes on'],
    ['thinking', [{ event: 'mute' }], 'thinking', 'a turn under way goes on'],
    ['idle', [{ event: 'mute' }], 'muted', 'mute'],
    ['listening', [{ event: 'mute' }], 'muted', 'mute drops the capture'],
    ['muted', [{ event: 'unmute' }], 'idle', 'unmute'],
    ['idle', [{ event: 'unmute' }], 'idle', 'unmute when not muted'],
    ['muted', [listen('2')], 'muted', 'a muted box does not listen'],
    ['idle', [listen('2', true)], 'waiting_for_answer', 'listening for a yes/no'],
    ['idle', [listen('2')], 'listening', 'button / wake word'],
    ['speaking', [listen('2')], 'listening', 'barge-in'],
    ['error', [listen('2')], 'listening', 'listening after an error'],
    ['listening', [listen('2'), ended('L', 'nothing')], 'listening', 'the end of a replaced capture'],
    ['listening', [ended('L', 'turn')], 'thinking', 'transcript injected'],
    ['waiting_for_answer', [ended('L', 'turn')], 'thinking', 'answer injected'],
    ['listening', [ended('L', 'message')], 'listening', '"didn\'t catch that" follows'],
    ['listening', [ended('L', 'nothing')], 'idle', 'silence'],
    ['idle', [ended('L', 'nothing')], 'idle', 'a capture end after stop'],
    ['listening', [ended('L', 'turn'), { event: 'input_done', listen_id: 'L' }], 'idle', 'an answer handed to a waiting turn, no turn of its own'],
    ['idle', [{ event: 'input_done', listen_id: 'L' }], 'idle', 'input done after stop'],
    ['idle', [turnStart('T2')], 'thinking', 'a console turn'],
    ['muted', [turnStart('T2')], 'thinking', 'a turn while muted'],
    ['error', [turnStart('T2')], 'thinking', 'a turn after an error'],
    ['listening', [turnStart('T2')], 'listening', 'a console turn while listening'],
    ['speaking', [turnStart('T2')], 'speaking', 'a console turn while a message is spoken'],
    ['thinking', [turnEnd('T')], 'idle', 'the turn ends, nothing spoken'],
    ['speaking', [turnStart('T2'), turnEnd('T2')], 'speaking', 'the turn ends while the speaker talks: NOT idle'],
    ['listening', [turnEnd('X')], 'listening', 'a turn end while listening'],
    ['listening', [SPEECH_START], 'listening', 'speech while the microphone captures'],
    ['listening', [ended('L', 'message'), SPEECH_START], 'speaking', '"didn\'t catch that" spoken'],
    ['thinking', [SPEECH_START], 'speaking', 'the first sentence'],
    ['muted', [SPEECH_START], 'speaking', 'a timer message while muted'],
    ['idle', [turnStart('T2', 'speaker'), SPEECH_START, SPEECH_END], 'speaking', 'between sentences while the model writes'],
    ['thinking', [SPEECH_START, SPEECH_END], 'thinking', 'a message spoken while a console turn runs: the speaker is done, the turn is not'],
    ['speaking', [SPEECH_END], 'idle', 'the speaker has finished'],
    ['muted', [SPEECH_START, SPEECH_END], 'muted', 'back to muted after a message'],
    ['error', [SPEECH_END], 'idle', 'the error message could not be spoken'],
    ['listening', [ended('L', 'message'), SPEECH_END], 'idle', 'the message could not be spoken'],
    ['listening', [SPEECH_END], 'listening', 'a cut reply ends during barge-in'],
    ['speaking', [{ event: 'followup_expected', answer: false }, SPEECH_END], 'speaking', 'follow-up due: no idle before listening'],
    ['speaking', [{ event: 'followup_expected', answer: false }, { event: 'followup_cancelled' }], 'speaking', 'cancelled while still speaking'],
    ['speaking', [{ event: 'followup_expected', answer: false }, SPEECH_END, { event: 'followup_cancelled' }], 'idle', 'cancelled after the speech'],
    ['idle', [{ event: 'followup_cancelled' }], 'idle', 'cancel without follow-up'],
    ['listening', [{ event: 'failure', message: 'engine crashed' }], 'error', 'the recogniser failed'],
  ];
  for (const [from, events, to, why] of cases) {
    test(`${from} --${events.map((e) => e.event).join(', ')}--> ${to}: ${why}`, () => {
      const m = machineIn(from);
      const states = run(m, events);
      assert.equal(states[states.length - 1], to);
    });
  }

  test('every row of the table is used by the cases above', () => {
    const used = new Set<Transition>();
    for (const [from, events] of cases) {
      const m = machineIn(from);
      for (const ev of events) {
        m.dispatch(ev);
        if (m.lastTransition) used.add(m.lastTransition);
      }
    }
    const unused = TRANSITIONS.filter((t) => !used.has(t)).map((t) => `${JSON.stringify(t.from)} ${t.on} -> ${t.to}`);
    assert.deepEqual(unused, []);
  });

  test('each event has a catch-all row, so no (state, event) pair is left undecided', () => {
    const ctx = new AssistantStateMachine().ctx;
    const events: StateEvent[] = [
      listen('1'), ended('1', 'nothing'), { event: 'input_done', listen_id: '1' }, turnStart('1'), turnEnd('1'), SPEECH_START, SPEECH_END,
      { event: 'followup_expected', answer: false }, { event: 'followup_cancelled' }, { event: 'failure', message: '' }, { event: 'stop' }, { event: 'mute' }, { event: 'unmute' },
    ];
    for (const s of ASSISTANT_STATES) for (const e of events) assert.ok(findTransition(TRANSITIONS, s, e, ctx), `${s} x ${e.event}`);
  });
});

describe('flows', () => {
  test('a spoken question and its reply: listening, thinking, speaking, idle only after the speaker finished', () => {
    const m = new AssistantStateMachine();
    const seen: AssistantState[] = [];
    m.onChange((c) => seen.push(c.to));
    run(m, [listen('1'), ended('1', 'turn'), turnStart('in1'), SPEECH_START, SPEECH_END, SPEECH_START, turnEnd('in1'), { event: 'input_done', listen_id: '1' }]);
    assert.equal(m.state, 'speaking', 'the turn is over but the last sentence still plays');
    m.dispatch(SPEECH_END);
    assert.deepEqual(seen, ['listening', 'thinking', 'speaking', 'idle']);
  });

  test('regression: the turn finishes (the kernel used to publish idle here) while the speaker still talks', () => {
    const m = new AssistantStateMachine();
    run(m, [turnStart('in1', 'speaker'), SPEECH_START]);
    assert.equal(m.dispatch(turnEnd('in1')), 'speaking');
    assert.equal(m.dispatch(SPEECH_END), 'idle');
  });

  test('stop: idle at once; the late ends of the cut capture, speech and turn change nothing', () => {
    const m = new AssistantStateMachine();
    run(m, [listen('1'), ended('1', 'turn'), turnStart('in1'), SPEECH_START, { event: 'followup_expected', answer: false }]);
    assert.equal(m.dispatch({ event: 'stop' }), 'idle');
    assert.deepEqual(run(m, [SPEECH_END, turnEnd('in1'), { event: 'input_done', listen_id: '1' }, { event: 'followup_cancelled' }]), ['idle', 'idle', 'idle', 'idle']);
  });

  test('barge-in: listening at once; the cut reply and the replaced turn do not bring speaking or idle back', () => {
    const m = new AssistantStateMachine();
    run(m, [listen('1'), ended('1', 'turn'), turnStart('in1'), SPEECH_START]);
    assert.equal(m.dispatch(listen('2')), 'listening');
    assert.deepEqual(run(m, [SPEECH_END, turnEnd('in1')]), ['listening', 'listening']);
    assert.deepEqual(run(m, [ended('2', 'turn'), turnStart('in2'), { event: 'input_done', listen_id: '1' }, SPEECH_START, turnEnd('in2'), { event: 'input_done', listen_id: '2' }, SPEECH_END]), [
      'thinking', 'thinking', 'thinking', 'speaking', 'speaking', 'speaking', 'idle',
    ]);
  });

  test('barge-in while the first capture is still being decoded: its late end does not end the new one', () => {
    const m = new AssistantStateMachine();
    run(m, [listen('1'), listen('2')]);
    assert.equal(m.dispatch(ended('1', 'nothing')), 'listening');
    assert.equal(m.dispatch(ended('2', 'nothing')), 'idle');
  });

  test('follow-up: a reply that asks something is followed by listening with no idle in between', () => {
    const m = new AssistantStateMachine();
    const seen: AssistantState[] = [];
    m.onChange((c) => seen.push(c.to));
    run(m, [listen('1'), ended('1', 'turn'), turnStart('in1'), SPEECH_START, { event: 'followup_expected', answer: false }, turnEnd('in1'), { event: 'input_done', listen_id: '1' }, SPEECH_END]);
    assert.equal(m.state, 'speaking');
    run(m, [listen('2'), ended('2', 'nothing')]);
    assert.deepEqual(seen, ['listening', 'thinking', 'speaking', 'listening', 'idle']);
  });

  test('confirmation: the question is followed by waiting_for_answer; the yes goes to the waiting turn', () => {
    const m = new AssistantStateMachine();
    const seen: AssistantState[] = [];
    m.onChange((c) => seen.push(c.to));
    run(m, [listen('1'), ended('1', 'turn'), turnStart('in1'), SPEECH_START, { event: 'followup_expected', answer: true }, SPEECH_END]);
    run(m, [listen('2', true), ended('2', 'turn'), { event: 'input_done', listen_id: '2' }, SPEECH_START, turnEnd('in1'), { event: 'input_done', listen_id: '1' }, SPEECH_END]);
    assert.deepEqual(seen, ['listening', 'thinking', 'speaking', 'waiting_for_answer', 'thinking', 'speaking', 'idle']);
  });

  test('muted: messages are spoken, the rest state is muted until unmuted', () => {
    const m = new AssistantStateMachine();
    assert.deepEqual(run(m, [{ event: 'mute' }, SPEECH_START, SPEECH_END, turnStart('t'), turnEnd('t'), { event: 'unmute' }]), ['muted', 'speaking', 'muted', 'thinking', 'muted', 'idle']);
  });

  test('muting during a reply: the reply goes on, muted when it is over, no follow-up listening', () => {
    const m = new AssistantStateMachine();
    run(m, [turnStart('t'), SPEECH_START, { event: 'followup_expected', answer: false }]);
    assert.deepEqual(run(m, [{ event: 'mute' }, turnEnd('t'), SPEECH_END]), ['speaking', 'speaking', 'muted']);
  });

  test('console only (no voice pipeline): turn facts alone move it', () => {
    const m = new AssistantStateMachine();
    assert.deepEqual(run(m, [turnStart('a', 'console'), turnStart('b', 'console'), turnEnd('a'), turnEnd('b')]), ['thinking', 'thinking', 'thinking', 'idle']);
  });

  test('an STT failure shows error, then the spoken message, then idle', () => {
    const m = new AssistantStateMachine();
    assert.deepEqual(run(m, [listen('1'), ended('1', 'message'), { event: 'failure', message: 'crash' }, SPEECH_START, SPEECH_END]), ['listening', 'listening', 'error', 'speaking', 'idle']);
  });
});

test('legacy states: the two newer states look like listening and idle to older consumers', () => {
  assert.deepEqual(ASSISTANT_STATES.map(legacyAssistantState), ['idle', 'listening', 'thinking', 'speaking', 'listening', 'idle', 'error']);
});
