// Times one ONNX file in ONNX Runtime's CPU build (npm onnxruntime-node) for bench/ort_parity.sh:
//   node bench/ort_time.js MODEL.onnx float32:1x3x224x224|int64:1x128 THREADS
// Graph optimisation 'all', THREADS intra-op threads, one inter-op thread, sequential execution. Warm-up: 10 runs and
// at least 1 s; then runs until at least 30 samples and 3 s (at most 500), each timed alone with
// process.hrtime.bigint() around `await session.run()`. Prints one JSON line: median_ms, min_ms, samples, version.
'use strict';
const ort = require('onnxruntime-node');

async function main() {
  const [path, spec, threads] = process.argv.slice(2);
  if (!path || !spec || !threads) throw new Error('usage: node bench/ort_time.js MODEL.onnx TYPE:DIMS THREADS');
  const [type, dimText] = spec.split(':');
  const dims = dimText.split('x').map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  let data;
  if (type === 'float32') data = Float32Array.from({length: n}, () => Math.random() * 2 - 1);
  else if (type === 'int64') data = BigInt64Array.from({length: n}, (_, i) => BigInt((i * 7919) % 30000));
  else throw new Error(`input type '${type}': float32 or int64`);
  const session = await ort.InferenceSession.create(path, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all'});
  const feeds = {[session.inputNames[0]]: new ort.Tensor(type, data, dims)};
  const ms = () => Number(process.hrtime.bigint()) / 1e6;
  for (let i = 0, t0 = ms(); i < 10 || ms() - t0 < 1000; ++i) await session.run(feeds);
  const samples = [];
  for (const t0 = ms(); (samples.length < 30 || ms() - t0 < 3000) && samples.length < 500;) {
    const s = ms();
    await session.run(feeds);
    samples.push(ms() - s);
  }
  samples.sort((a, b) => a - b);
  const mid = samples.length >> 1;
  const median = samples.length % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
  console.log(JSON.stringify({median_ms: median, min_ms: samples[0], samples: samples.length,
                              version: require('onnxruntime-node/package.json').version}));
}
main().catch((e) => { console.error(`bench/ort_time.js: ${e.message}`); process.exit(1); });
