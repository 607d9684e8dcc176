// bench/onnx.sh's ONNX Runtime side (onnxruntime-node from npm): the same
// .onnx file, inference at the batch given, median of 5 timed loops; also
// the session's creation time (loading the model).
//   node bench/onnx_ort.js MODEL.onnx BATCH THREADS
// Finds onnxruntime-node through NODE_PATH or /work/npm-ort/node_modules.
let ort;
try { ort = require("onnxruntime-node"); } catch (e) { ort = require("/work/npm-ort/node_modules/onnxruntime-node"); }
const [path, batchS, threadsS] = process.argv.slice(2);
const batch = +batchS, threads = +threadsS;
(async () => {
  const t0 = process.hrtime.bigint();
  const s = await ort.InferenceSession.create(path, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const n = batch * 3 * 224 * 224;
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = Math.sin(i);
  const feeds = { [s.inputNames[0]]: new ort.Tensor("float32", data, [batch, 3, 224, 224]) };
  await s.run(feeds);
  let inner = 1;
  for (;;) {
    const a = process.hrtime.bigint();
    for (let i = 0; i < inner; i++) await s.run(feeds);
    if (Number(process.hrtime.bigint() - a) / 1e9 > 0.2 || inner >= 64) break;
    inner *= 2;
  }
  const samples = [];
  for (let r = 0; r < 5; r++) {
    const a = process.hrtime.bigint();
    for (let i = 0; i < inner; i++) await s.run(feeds);
    samples.push(Number(process.hrtime.bigint() - a) / 1e6 / inner);
  }
  samples.sort((x, y) => x - y);
  console.log(`RESULT ort_t${threads}_resnet18_b${batch}_ms ${samples[2].toFixed(2)}`);
  if (batch === 1) console.log(`RESULT ort_t${threads}_load_ms ${loadMs.toFixed(1)}`);
})().catch((e) => { console.error(e); process.exit(1); });
