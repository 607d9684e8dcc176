#!/bin/sh
# tools/layers.sh: the include arrows in core/ that run upward through the
# engine's layers (docs/internals.md, "Layers"). Prints one line per arrow,
# "file -> header  (layer -> higher layer)", then a count; arrows listed in
# tools/layers.known (with the reason each stays) are marked "known".
# Exit status 1 when an arrow is not in that list: a new upward include.
#   tools/layers.sh            the arrows, known ones marked
#   tools/layers.sh --new      only the arrows not in tools/layers.known
# The device modules (core/cuda/, core/gpusim/) are built apart and reach the
# engine through ctx->core_api; they and core/tests/ are not layered here.
cd "$(dirname "$0")/.." || exit 2
only_new=0
[ "$1" = "--new" ] && only_new=1

# The layers, bottom-up: a file may include headers of its own layer or below.
layer_of() {
    case "$1" in
    core/include/*|core/ltf_backend.h|core/pool.[ch]|core/device_alloc.[ch]) echo 0 ;;
    core/ctx.[ch]|core/crc32c.[ch]) echo 1 ;;
    core/dtype.c|core/storage.[ch]|core/tensor.[ch]|core/shape.[ch]|core/idmap.[ch]|core/variable.[ch]) echo 2 ;;
    core/op.[ch]|core/grad.[ch]|core/half.[ch]|core/fused.h|core/ops/*|core/cpu/*) echo 3 ;;
    core/tape.[ch]|core/device.[ch]) echo 4 ;;
    core/graph.[ch]|core/functions.[ch]|core/passes.c) echo 5 ;;
    core/plan.c) echo 6 ;;
    core/checkpoint.c|core/data.c|core/summary.c|core/tfrecord.c|core/csv.c|core/io_image.c|core/io_tensor.c|core/onnx_reader.c) echo 7 ;;
    *) echo "" ;;
    esac
}
name_of() {
    case "$1" in
    0) echo base ;; 1) echo ctx ;; 2) echo tensor ;; 3) echo op ;;
    4) echo eager ;; 5) echo graph ;; 6) echo plan ;; 7) echo io ;;
    esac
}

total=0 new=0
files=$(ls core/*.c core/*.h core/ops/*.c core/cpu/*.c core/cpu/*.h core/include/*.h 2>/dev/null)
for f in $files; do
    lf=$(layer_of "$f")
    [ -n "$lf" ] || { echo "layers.sh: $f has no layer: add it to tools/layers.sh" >&2; new=$((new + 1)); continue; }
    dir=$(dirname "$f")
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        # resolve as the compiler does: beside the file, then core/ and core/include/
        if [ -f "$dir/$inc" ]; then h=$(realpath -m --relative-to=. "$dir/$inc")
        elif [ -f "core/$inc" ]; then h="core/$inc"
        elif [ -f "core/include/$inc" ]; then h="core/include/$inc"
        else continue; fi
        lh=$(layer_of "$h")
        [ -n "$lh" ] && [ "$lh" -gt "$lf" ] || continue
        total=$((total + 1))
        mark="" 
        if grep -qx "$f -> $h" tools/layers.known 2>/dev/null; then mark="  known"
        else new=$((new + 1)); fi
        [ $only_new = 1 ] && [ -n "$mark" ] && continue
        printf '%s -> %s  (%s -> %s)%s\n' "$f" "$h" "$(name_of "$lf")" "$(name_of "$lh")" "$mark"
    done
done
echo "$total upward include arrows in core/, $new not in tools/layers.known"
[ $new = 0 ]
