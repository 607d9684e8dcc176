/*
** cuda/host.h: the device kernels built for the host (libltf_gpu_host.a),
** for tests and the simulated GPU module (docs/cuda.md).
*/
#ifndef LTF_CUDA_HOST_H
#define LTF_CUDA_HOST_H

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel of op 'op' (an ltf_op_id) as an ltf_kernel_fn cast to a
** pointer, running the CUDA kernels' bodies over every index on host
** memory; NULL for ops without a device kernel (the same set as
** libltf_cuda.so covers). Errors a device reports at the next sync (integer
** division by zero, indices out of range) are reported by the call itself. */
const void *ltf_gpu_host_kernel(int op);
/* Whether that kernel takes float16/bfloat16 tensors as they are (the
** others run on float32 copies: ltf_backend.takes_half). */
int ltf_gpu_host_takes_half(int op);

#ifdef __cplusplus
}
#endif

#endif
