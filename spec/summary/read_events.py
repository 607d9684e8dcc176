#!/usr/bin/python3
"""Decode a TensorBoard event file independently of luatf (spec/summary).

usage: read_events.py DESCRIPTOR_SET EVENT_FILE

DESCRIPTOR_SET is a FileDescriptorSet of proto/*.proto (protoc-c
--descriptor_set_out --include_imports). Every record's framing is checked
here (length, masked CRC32C of the length and of the data, computed in
Python), each Event is parsed with python3-protobuf, and a JSON list of the
events goes to stdout: wall_time, step, file_version, summary values (tag,
plugin, content, data_class, description, dtype, shape, values: numbers from
tensor_content, strings as latin-1 text; PNG strings decoded with PIL to
pixels; WAV strings read with the wave module), graph nodes.
"""
import io
import json
import struct
import sys
import wave

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

POLY = 0x82F63B78
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(b):
    c = crc32c(b)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def messages(desc_path):
    fds = descriptor_pb2.FileDescriptorSet()
    with open(desc_path, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    get = lambda n: message_factory.GetMessageClass(pool.FindMessageTypeByName(n)) \
        if hasattr(message_factory, "GetMessageClass") else \
        message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName(n))
    return get("tensorflow.Event"), get("tensorflow.GraphDef"), pool


NUMERIC = {1: ("f", 4), 2: ("d", 8), 3: ("i", 4), 4: ("B", 1), 9: ("q", 8), 10: ("?", 1)}


def blob(b):
    out = {"len": len(b), "text": b.decode("latin-1")}
    if b[:8] == b"\x89PNG\r\n\x1a\n":
        from PIL import Image
        im = Image.open(io.BytesIO(b))
        im.load()
        out["png"] = {"mode": im.mode, "width": im.size[0], "height": im.size[1],
                      "pixels": [list(p) if isinstance(p, tuple) else [p] for p in im.getdata()]}
    elif b[:4] == b"RIFF" and b[8:12] == b"WAVE":
        w = wave.open(io.BytesIO(b))
        frames = w.readframes(w.getnframes())
        out["wav"] = {"channels": w.getnchannels(), "sampwidth": w.getsampwidth(), "rate": w.getframerate(),
                      "frames": w.getnframes(),
                      "samples": list(struct.unpack("<%dh" % (len(frames) // 2), frames))}
    return out


def main():
    Event, GraphDef, pool = messages(sys.argv[1])
    data = open(sys.argv[2], "rb").read()
    pos, events = 0, []
    while pos < len(data):
        if pos + 12 > len(data):
            raise SystemExit("truncated header at %d" % pos)
        (n,) = struct.unpack("<Q", data[pos:pos + 8])
        (lc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if lc != masked(data[pos:pos + 8]):
            raise SystemExit("bad length crc at %d" % pos)
        body = data[pos + 12:pos + 12 + n]
        (dc,) = struct.unpack("<I", data[pos + 12 + n:pos + 16 + n])
        if dc != masked(body):
            raise SystemExit("bad data crc at %d" % pos)
        pos += 16 + n
        e = Event()
        e.ParseFromString(body)
        ev = {"wall_time": e.wall_time, "step": e.step, "what": e.WhichOneof("what")}
        if ev["what"] == "file_version":
            ev["file_version"] = e.file_version
        elif ev["what"] == "graph_def":
            g = GraphDef()
            g.ParseFromString(e.graph_def)
            nodes = []
            for nd in g.node:
                node = {"name": nd.name, "op": nd.op, "input": list(nd.input)}
                if "_output_shapes" in nd.attr:
                    sh = nd.attr["_output_shapes"].list.shape[0]
                    node["shape"] = None if sh.unknown_rank else [d.size for d in sh.dim]
                if "T" in nd.attr:
                    node["T"] = nd.attr["T"].type
                nodes.append(node)
            ev["graph"] = {"nodes": nodes, "producer": g.versions.producer}
        elif ev["what"] == "summary":
            vals = []
            for v in e.summary.value:
                t = v.tensor
                shape = [d.size for d in t.tensor_shape.dim]
                val = {"tag": v.tag, "plugin": v.metadata.plugin_data.plugin_name,
                       "content": v.metadata.plugin_data.content.hex(),
                       "data_class": v.metadata.data_class, "description": v.metadata.summary_description,
                       "kind": v.WhichOneof("value"), "dtype": t.dtype, "shape": shape}
                if t.dtype == 7:
                    val["strings"] = [blob(s) for s in t.string_val]
                elif t.dtype in NUMERIC:
                    fmt, size = NUMERIC[t.dtype]
                    c = t.tensor_content
                    val["values"] = list(struct.unpack("<%d%s" % (len(c) // size, fmt), c))
                vals.append(val)
            ev["values"] = vals
        events.append(ev)
    json.dump(events, sys.stdout)


main()
