#!/usr/bin/python3
"""TensorProto bytes read and written with python3-protobuf, independently
of luatf (spec/io/raw_proto_spec.lua).
usage: tensor_proto.py DESCRIPTOR_SET decode FILE     -> JSON {dtype, shape, content, values}
       tensor_proto.py DESCRIPTOR_SET encode FILE JSON  (JSON: the TensorProto's fields)
DESCRIPTOR_SET: protoc-c --descriptor_set_out --include_imports of proto/tensor.proto."""
import json
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

fds = descriptor_pb2.FileDescriptorSet()
with open(sys.argv[1], "rb") as f:
    fds.ParseFromString(f.read())
pool = descriptor_pool.DescriptorPool()
for fd in fds.file:
    pool.Add(fd)
d = pool.FindMessageTypeByName("tensorflow.TensorProto")
TensorProto = message_factory.GetMessageClass(d) if hasattr(message_factory, "GetMessageClass") \
    else message_factory.MessageFactory(pool).GetPrototype(d)
FMT = {1: "f", 2: "d", 3: "i", 4: "B", 9: "q", 10: "?"}

if sys.argv[2] == "decode":
    p = TensorProto()
    with open(sys.argv[3], "rb") as f:
        p.ParseFromString(f.read())
    out = {"dtype": p.dtype, "shape": [x.size for x in p.tensor_shape.dim]}
    c = p.tensor_content
    if c:
        fmt = FMT[p.dtype]
        n = len(c) // struct.calcsize(fmt)
        out["content"] = [float(v) if fmt in "fd" else int(v) for v in struct.unpack("<%d%s" % (n, fmt), c)]
    out["string_val"] = [s.decode("latin-1") for s in p.string_val]
    print(json.dumps(out))
else:
    p = json_format.Parse(sys.argv[4], TensorProto())
    with open(sys.argv[3], "wb") as f:
        f.write(p.SerializeToString())
