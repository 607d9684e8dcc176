#!/usr/bin/env node
// tools/ort_run.js: run an ONNX model under ONNX Runtime (onnxruntime-node)
// and write its outputs: what the ONNX specs compare luatf against.
//   node tools/ort_run.js model.onnx inputs.json outputs.json
// inputs.json: {"name": {"dtype": "float32", "dims": [2, 5], "data": [...]}, ...}
// (data flat, row-major; int64 values as numbers or decimal strings)
// outputs.json: the same layout for every output of the model, in order,
// plus "__order": [the output names].
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

function fromTensor(t) {
  let data;
  if (t.type === 'int64') data = Array.from(t.data, (v) => Number(v));
  else if (t.type === 'bool') data = Array.from(t.data, (v) => !!v);
  else if (t.type === 'string') data = Array.from(t.data);
  else data = Array.from(t.data, (v) => (Number.isFinite(v) ? v : String(v)));
  return {dtype: t.type, dims: Array.from(t.dims), data};
}

async function main() {
  const [model, inPath, outPath] = process.argv.slice(2);
  if (!model || !inPath || !outPath) {
    process.stderr.write('usage: node tools/ort_run.js model.onnx inputs.json outputs.json\n');
    process.exit(64);
  }
  const ort = loadOrt();
  const specs = JSON.parse(fs.readFileSync(inPath, 'utf8'));
  const feeds = {};
  for (const name of Object.keys(specs)) feeds[name] = toTensor(ort, specs[name]);
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all'});
  const results = await session.run(feeds);
  const out = {__order: session.outputNames};
  for (const name of session.outputNames) out[name] = fromTensor(results[name]);
  fs.writeFileSync(outPath, JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write('ort_run: ' + (e && e.message ? e.message : String(e)) + '\n');
  process.exit(1);
});
