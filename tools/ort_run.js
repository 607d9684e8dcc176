#!/usr/bin/env node
// tools/ort_run.js: run an ONNX model under ONNX Runtime (onnxruntime-node)
// and write its outputs: what the ONNX specs compare luatf against.
//   node tools/ort_run.js model.onnx inputs.json outputs.json
// inputs.json: {"name": {"dtype": "float32", "dims": [2, 5], "data": [...]}, ...}
// (data flat, row-major; int64 values as numbers or decimal strings)
// outputs.json: the same layout for every output of the model, in order,
// plus "__order": [the output names].
// node tools/ort_run.js --batch jobs.json runs many models in one process
// (tools/onnx_export_testdata.lua).
// onnxruntime-node is found through NODE_PATH, LTF_ORT_NODE_PATH (its
// node_modules folder) or the usual require search. Exit status 2 when it
// cannot be loaded (the specs skip then), 1 when the run fails.
'use strict';
const fs = require('fs');
const path = require('path');

function loadOrt() {
  const dirs = [];
  if (process.env.LTF_ORT_NODE_PATH) dirs.push(process.env.LTF_ORT_NODE_PATH);
  for (const d of dirs) {
    try { return require(path.resolve(d, 'onnxruntime-node')); } catch (e) { /* next */ }
  }
  try { return require('onnxruntime-node'); } catch (e) {
    process.stderr.write('ort_run: onnxruntime-node not found (set LTF_ORT_NODE_PATH): ' + e.message + '\n');
    process.exit(2);
  }
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array,
  int8: Int8Array, bool: Uint8Array,
};

function toTensor(ort, spec) {
  const dtype = spec.dtype;
  // an empty Lua table may arrive as {} (a scalar's dims)
  if (!Array.isArray(spec.dims)) spec.dims = [];
  if (!Array.isArray(spec.data)) spec.data = [];
  if (dtype === 'string') return new ort.Tensor('string', spec.data.map(String), spec.dims);
  const A = ARRAYS[dtype];
  if (!A) throw new Error('ort_run: unsupported input dtype ' + dtype);
  let data;
  if (dtype === 'int64') data = BigInt64Array.from(spec.data.map((v) => BigInt(v)));
  else if (dtype === 'bool') data = Uint8Array.from(spec.data.map((v) => (v ? 1 : 0)));
  else data = A.from(spec.data);
  return new ort.Tensor(dtype, data, spec.dims);
}

// IEEE half bits -> number (onnxruntime-node hands float16 out as Uint16 bit patterns)
function halfToNumber(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e === 0) return s * f * Math.pow(2, -24);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * Math.pow(2, e - 15);
}

function fromTensor(t) {
  let data;
  if (t.type === 'float16') {
    data = Array.from(t.data, (v) => { const x = halfToNumber(v); return Number.isFinite(x) ? x : String(x); });
  } else if (t.type === 'int64') data = Array.from(t.data, (v) => Number(v));
  else if (t.type === 'bool') data = Array.from(t.data, (v) => !!v);
  else if (t.type === 'string') data = Array.from(t.data);
  else data = Array.from(t.data, (v) => (Number.isFinite(v) ? v : String(v)));
  return {dtype: t.type, dims: Array.from(t.dims), data};
}

async function runOne(ort, model, inPath, outPath) {
  const specs = JSON.parse(fs.readFileSync(inPath, 'utf8'));
  const feeds = {};
  for (const name of Object.keys(specs)) feeds[name] = toTensor(ort, specs[name]);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all'});
  const results = await session.run(feeds);
  const out = {__order: session.outputNames};
  for (const name of session.outputNames) out[name] = fromTensor(results[name]);
  fs.writeFileSync(outPath, JSON.stringify(out));
}

// --batch jobs.json: [{"model":, "inputs":, "outputs":}, ...] in one process (one
// start-up for many models); a failing job writes {"__error": message} and the rest go on
async function batch(jobsPath) {
  const ort = loadOrt();
  const jobs = JSON.parse(fs.readFileSync(jobsPath, 'utf8'));
  for (const j of jobs) {
    try { await runOne(ort, j.model, j.inputs, j.outputs); } catch (e) {
      fs.writeFileSync(j.outputs, JSON.stringify({__error: e && e.message ? e.message : String(e)}));
    }
  }
}

async function main() {
  if (process.argv[2] === '--batch') return batch(process.argv[3]);
  const [model, inPath, outPath] = process.argv.slice(2);
  if (!model || !inPath || !outPath) {
    process.stderr.write('usage: node tools/ort_run.js model.onnx inputs.json outputs.json\n');
    process.exit(64);
  }
  await runOne(loadOrt(), model, inPath, outPath);
}

main().catch((e) => {
  process.stderr.write('ort_run: ' + (e && e.message ? e.message : String(e)) + '\n');
  process.exit(1);
});
