// Push-to-talk capture (an AudioWorklet): the microphone's first channel as 16 kHz mono signed 16-bit samples,
// posted to the page in 100 ms chunks. The page asks the AudioContext for 16 kHz, so usually the browser has
// resampled already; otherwise each output sample is the mean of the input samples it stands for.
class PttCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.ratio = sampleRate / 16000;
    this.phase = 0;
    this.acc = 0;
    this.cnt = 0;
    this.out = new Int16Array(1600);
    this.n = 0;
    this.port.onmessage = (e) => {
      if (e.data === 'flush') {
        this.post();
        this.port.postMessage('flushed');
      }
    };
  }
  post() {
    if (this.n === 0) return;
    const chunk = this.out.slice(0, this.n);
    this.port.postMessage(chunk.buffer, [chunk.buffer]);
    this.n = 0;
  }
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (!ch) return true;
    for (let i = 0; i < ch.length; i++) {
      this.acc += ch[i];
      this.cnt++;
      this.phase += 1;
      if (this.phase < this.ratio) continue;
      this.phase -= this.ratio;
      const v = Math.max(-1, Math.min(1, this.acc / this.cnt));
      this.acc = 0;
      this.cnt = 0;
      this.out[this.n++] = v < 0 ? v * 0x8000 : v * 0x7fff;
      if (this.n === this.out.length) this.post();
    }
    return true;
  }
}
registerProcessor('ptt-capture', PttCapture);
