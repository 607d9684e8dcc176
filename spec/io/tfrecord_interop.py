#!/usr/bin/python3
"""TFRecord + tf.train.Example interop check, independent of luatf.

Framing and masked CRC32C are implemented here from TensorFlow's format
description; messages are decoded with Debian's python3-protobuf against a
descriptor set compiled from proto/example.proto and proto/feature.proto.

  tfrecord_interop.py read  DESCSET FILE COMPRESSION   -> JSON list of examples
  tfrecord_interop.py write DESCSET FILE COMPRESSION   -> writes the examples of sample()
"""
import gzip, json, struct, sys, zlib
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF

def mask(c):
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF

def example_class(descset):
    fds = descriptor_pb2.FileDescriptorSet()
    with open(descset, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    desc = pool.FindMessageTypeByName("tensorflow.Example")
    try:
        return message_factory.GetMessageClass(desc)
    except AttributeError:
        return message_factory.MessageFactory(pool).GetPrototype(desc)

def read_records(path, comp):
    raw = open(path, "rb").read()
    if comp == "GZIP":
        raw = gzip.decompress(raw)
    elif comp == "ZLIB":
        raw = zlib.decompress(raw)
    out, at = [], 0
    while at < len(raw):
        head = raw[at:at + 8]
        (n,) = struct.unpack("<Q", head)
        (hc,) = struct.unpack("<I", raw[at + 8:at + 12])
        if mask(crc32c(head)) != hc:
            raise SystemExit("length CRC mismatch at %d" % at)
        data = raw[at + 12:at + 12 + n]
        (dc,) = struct.unpack("<I", raw[at + 12 + n:at + 16 + n])
        if len(data) != n or mask(crc32c(data)) != dc:
            raise SystemExit("data CRC mismatch at %d" % at)
        out.append(data)
        at += 16 + n
    return out

def to_json(ex):
    d = {}
    for k, f in ex.features.feature.items():
        kind = f.WhichOneof("kind")
        if kind == "bytes_list":
            d[k] = {kind: [v.hex() for v in f.bytes_list.value]}
        elif kind == "float_list":
            d[k] = {kind: [float(v) for v in f.float_list.value]}
        elif kind == "int64_list":
            d[k] = {kind: [int(v) for v in f.int64_list.value]}
        else:
            d[k] = {}
    return d

def sample(Example):
    exs = []
    for i in range(5):
        e = Example()
        e.features.feature["id"].int64_list.value.extend([i, -i * 1000000007, 2 ** 62])
        e.features.feature["score"].float_list.value.extend([i * 0.25, -1.5])
        e.features.feature["name"].bytes_list.value.extend([("py%d" % i).encode(), b"\x00\xff"])
        if i % 2 == 0:
            e.features.feature["empty"].float_list.value.extend([])
        exs.append(e)
    return exs

def main():
    cmd, descset, path, comp = sys.argv[1:5]
    Example = example_class(descset)
    if cmd == "read":
        out = []
        for rec in read_records(path, comp):
            e = Example()
            e.ParseFromString(rec)
            out.append(to_json(e))
        print(json.dumps(out))
    else:
        raw = b""
        for e in sample(Example):
            data = e.SerializeToString()
            head = struct.pack("<Q", len(data))
            raw += head + struct.pack("<I", mask(crc32c(head))) + data + struct.pack("<I", mask(crc32c(data)))
        if comp == "GZIP":
            raw = gzip.compress(raw)
        elif comp == "ZLIB":
            raw = zlib.compress(raw)
        open(path, "wb").write(raw)

main()
