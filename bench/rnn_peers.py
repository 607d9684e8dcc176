"""bench/rnn_peers.py: the PyTorch peers of bench/rnn.lua, timed the same way
(bench/peer_timing.py: median of 5 loops of about 0.25 s after a warm-up).
Prints RESULT lines.
  python3 bench/rnn_peers.py lstm_layer T   torch.nn.LSTM(128, 256), batch 32 x 50 steps, forward +
                                            backward (gradients of the weights), T threads
  python3 bench/rnn_peers.py char_rnn T     Embedding(65, 64) -> nn.LSTM(64, 128) -> Linear(128, 65),
                                            batch 32 x 50 characters, Adam step: characters/second
"""
import sys

import torch

from peer_timing import timed


def result(name, value, unit):
    print("RESULT %s %.6g %s" % (name, value, unit), flush=True)


def lstm_layer(threads):
    torch.manual_seed(1)
    lstm = torch.nn.LSTM(128, 256, batch_first=True)
    x = torch.randn(32, 50, 128)

    def step():
        lstm.zero_grad(set_to_none=True)
        y, _ = lstm(x)
        y.sum().backward()

    result("torch%d_lstm_layer_ms" % threads, timed(step) * 1e3, "ms")


class CharRNN(torch.nn.Module):
    def __init__(self, v):
        super().__init__()
        self.emb = torch.nn.Embedding(v, 64)
        self.lstm = torch.nn.LSTM(64, 128, batch_first=True)
        self.out = torch.nn.Linear(128, v)

    def forward(self, x):
        h, _ = self.lstm(self.emb(x))
        return self.out(h)


def char_rnn(threads):
    torch.manual_seed(1)
    v, b, t = 65, 32, 50
    model = CharRNN(v)
    opt = torch.optim.Adam(model.parameters(), lr=0.002)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randint(0, v, (b, t))
    y = torch.randint(0, v, (b, t))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x).reshape(-1, v), y.reshape(-1))
        loss.backward()
        opt.step()

    result("torch%d_char_rnn_chars_per_s" % threads, b * t / timed(step), "chars/s")


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "lstm_layer"
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    torch.set_num_threads(threads)
    {"lstm_layer": lstm_layer, "char_rnn": char_rnn}[which](threads)
