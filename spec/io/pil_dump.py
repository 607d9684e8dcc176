#!/usr/bin/python3
"""Decode an image with PIL (python3-pil) for spec/io/image_codec_spec.lua:
    pil_dump.py FILE [MODE] [DRAFT_SCALE]
prints one JSON object {"w":, "h":, "mode":, "frames": [[samples...], ...]}:
the image converted to MODE (when given), each frame's samples row-major,
channels last. DRAFT_SCALE (2, 4, 8) asks libjpeg for a scaled decode
(Image.draft), as decode_jpeg's ratio. GIF frames: every frame, in RGB."""
import json
import sys
from PIL import Image

path = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
scale = int(sys.argv[3]) if len(sys.argv) > 3 else 1
im = Image.open(path)
if scale > 1:
    im.draft(im.mode, (im.size[0] // scale, im.size[1] // scale))
frames = []
for k in range(getattr(im, "n_frames", 1)):
    im.seek(k)
    f = im.convert(mode) if mode else im
    data = list(f.getdata())
    flat = []
    for v in data:
        if isinstance(v, tuple):
            flat.extend(v)
        else:
            flat.append(v)
    frames.append(flat)
print(json.dumps({"w": im.size[0], "h": im.size[1], "mode": (mode or im.mode), "frames": frames}))
