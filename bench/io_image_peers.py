#!/usr/bin/python3
"""bench/io_image_peers.py: the image files of bench/io_image.sh, and PIL's
decode times on them (python3-pil).
usage: io_image_peers.py DIR make     write DIR/png/*.png (1,000 28x28 grey digits-like)
                                      and DIR/jpeg/*.jpg (100 640x480 RGB, quality 90)
       io_image_peers.py DIR time     print RESULT lines: median of 5 passes over all
                                      files, bytes already in memory, Image.open + load()
"""
import glob
import io
import os
import random
import sys
import time

from PIL import Image, ImageDraw, ImageFilter

d, what = sys.argv[1], sys.argv[2]
if what == "make":
    rnd = random.Random(1)
    os.makedirs(d + "/png", exist_ok=True)
    os.makedirs(d + "/jpeg", exist_ok=True)
    for i in range(1000):
        im = Image.new("L", (28, 28))
        dr = ImageDraw.Draw(im)
        for _ in range(3):   # a few strokes, as a handwritten digit
            pts = [(rnd.randint(4, 23), rnd.randint(4, 23)) for _ in range(3)]
            dr.line(pts, fill=rnd.randint(180, 255), width=rnd.randint(2, 3))
        im.filter(ImageFilter.GaussianBlur(0.6)).save("%s/png/%04d.png" % (d, i))
    for i in range(100):
        im = Image.new("RGB", (640, 480))
        dr = ImageDraw.Draw(im)
        for _ in range(40):
            x, y = rnd.randint(0, 640), rnd.randint(0, 480)
            dr.ellipse([x, y, x + rnd.randint(10, 200), y + rnd.randint(10, 200)],
                       fill=(rnd.randint(0, 255), rnd.randint(0, 255), rnd.randint(0, 255)))
        noise = Image.effect_noise((640, 480), 24).convert("RGB")
        Image.blend(im.filter(ImageFilter.GaussianBlur(2)), noise, 0.15).save("%s/jpeg/%03d.jpg" % (d, i), quality=90)
    sys.exit(0)


def bench(pattern):
    blobs = [open(p, "rb").read() for p in sorted(glob.glob(pattern))]
    def one():
        for b in blobs:
            Image.open(io.BytesIO(b)).load()
    one()
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        one()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return len(blobs), ts[2]


n, t = bench(d + "/png/*.png")
print("RESULT pil_decode_png_1000x28x28 %.3f ms (%.1f us/image)" % (t * 1e3, t / n * 1e6))
n, t = bench(d + "/jpeg/*.jpg")
print("RESULT pil_decode_jpeg_100x640x480 %.3f ms (%.2f ms/image)" % (t * 1e3, t / n * 1e3))
