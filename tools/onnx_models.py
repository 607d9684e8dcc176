#!/usr/bin/python3
"""Export PyTorch models to ONNX with reference inputs and outputs, for luatf's
ONNX import specs (spec/onnx/import_models_spec.lua), bench/onnx.sh and the
shipped example model (examples/data/mlp.onnx).

    /usr/bin/python3 tools/onnx_models.py OUTDIR [--models mlp,convnet,...] [--opsets 13,17] [--seed 0]

For each model and opset it writes OUTDIR/<model>_op<opset>.onnx, exported
with the batch axis dynamic (and the transformer's sequence length), and
OUTDIR/<model>_op<opset>/input_<i>.pb / output_<i>.pb (ONNX TensorProtos):
PyTorch's own outputs on random inputs whose batch size (3) differs from
the one traced for the export (2), and the transformer's length (5 for 7).
Models: mlp, convnet (the MNIST example's network), resnet18, mobilenet_v2
(torchvision, random weights), lstm, gru (over a sequence, states out too),
bilstm, bigru (the same, bidirectional),
transformer (nn.TransformerEncoder, 2 layers), upsample (convs and
F.interpolate nearest and bilinear: ONNX Resize). Weights are random (seeded).
"""
import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 4)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


class ConvNet(nn.Module):   # the PyTorch MNIST example's network
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


class RNN(nn.Module):
    def __init__(self, kind, bidirectional=False):
        super().__init__()
        self.kind = kind
        cls = nn.LSTM if kind == "lstm" else nn.GRU
        self.rnn = cls(input_size=6, hidden_size=8, num_layers=1, bidirectional=bidirectional)

    def forward(self, x):
        if self.kind == "lstm":
            y, (h, c) = self.rnn(x)
            return y, h, c
        y, h = self.rnn(x)
        return y, h


class Upsample(nn.Module):   # Resize in both modes PyTorch exports (nearest x2, bilinear x2)
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 2, 3, padding=1)

    def forward(self, x):
        x = F.interpolate(F.relu(self.conv1(x)), scale_factor=2, mode="nearest")
        return F.interpolate(self.conv2(x), scale_factor=2, mode="bilinear", align_corners=False)


def build(name):
    if name == "upsample":
        return Upsample(), [(2, 3, 8, 8)], 0
    if name == "mlp":
        return MLP(), [(2, 8)], 0
    if name == "convnet":
        return ConvNet(), [(2, 1, 28, 28)], 0
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18(), [(2, 3, 224, 224)], 0
    if name == "mobilenet_v2":
        import torchvision
        return torchvision.models.mobilenet_v2(), [(2, 3, 224, 224)], 0
    if name in ("lstm", "gru"):
        return RNN(name), [(5, 2, 6)], 1          # (seq, batch, features): batch is axis 1
    if name in ("bilstm", "bigru"):
        return RNN(name[2:], bidirectional=True), [(5, 2, 6)], 1
    if name == "transformer":
        layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
        return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False), [(2, 7, 16)], 0
    raise SystemExit("onnx_models.py: unknown model " + name)


def export(name, opset, outdir, seed):
    torch.manual_seed(seed)
    model, shapes, batch_axis = build(name)
    model.eval()
    if name in ("resnet18", "mobilenet_v2"):
        # random but sane BatchNorm statistics, so outputs are not degenerate
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    args = tuple(torch.randn(*s) for s in shapes)
    with torch.no_grad():
        outs = model(*args)
    outs = outs if isinstance(outs, tuple) else (outs,)
    in_names = ["input" if len(shapes) == 1 else "input%d" % i for i in range(len(shapes))]
    out_names = ["output"] if len(outs) == 1 else ["output%d" % i for i in range(len(outs))]
    dyn = {n: {batch_axis: "batch"} for n in in_names}
    for n in out_names:
        dyn[n] = {batch_axis: "batch"}   # the recurrent models' outputs are (seq|layers, batch, ...) too
    if name == "transformer":           # the sequence length is dynamic too
        for n in in_names + out_names:
            dyn[n][1] = "seq"
    path = os.path.join(outdir, "%s_op%d.onnx" % (name, opset))
    torch.onnx.export(model, args, path, opset_version=opset, input_names=in_names, output_names=out_names,
                      dynamic_axes=dyn, do_constant_folding=True)
    # reference: another batch size than the export's
    test = []
    for s in shapes:
        s = list(s)
        s[batch_axis] = 3
        if name == "transformer":
            s[1] = 5
        test.append(torch.randn(*s))
    with torch.no_grad():
        ref = model(*test)
    ref = ref if isinstance(ref, tuple) else (ref,)
    d = os.path.join(outdir, "%s_op%d" % (name, opset))
    os.makedirs(d, exist_ok=True)
    for i, t in enumerate(test):
        with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(t.numpy(), in_names[i]).SerializeToString())
    for i, t in enumerate(ref):
        with open(os.path.join(d, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(t.numpy(), out_names[i]).SerializeToString())
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--models", default="mlp,convnet,resnet18,mobilenet_v2,lstm,gru,bilstm,bigru,transformer,upsample")
    ap.add_argument("--opsets", default="13,17")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    torch.set_num_threads(1)
    for name in a.models.split(","):
        for opset in a.opsets.split(","):
            print(export(name, int(opset), a.outdir, a.seed), flush=True)


if __name__ == "__main__":
    sys.exit(main())
