/*
** cuda/fusion.h: NVRTC code generation for the plan's fused elementwise
** groups (fused.h): one CUDA kernel per group, compiled at run time and
** cached by its source text.
*/
#ifndef LTF_CUDA_FUSION_H
#define LTF_CUDA_FUSION_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ltf_fused;
struct ltf_ctx;
struct ltf_tensor;

/* The CUDA source of group 'f' (malloc'd, the caller frees it), a kernel
** named "ltf_fused" taking (long long n, const T_0 *e_0, ..., T_out *out,
** int *flag); NULL when a member has no device form, with the reason in
** 'why'. The source includes "elementwise.cuh" (the bodies' header). */
char *ltf_cuda_fused_source(const struct ltf_fused *f, char *why, size_t whylen);
/* Compile 'src' with NVRTC for 'arch' ("compute_90": PTX; "sm_90": a
** cubin). On success returns 0 and, when 'image' is not NULL, the
** compiled bytes (malloc'd) in '*image' / '*size'; on failure -1 with the
** compiler's log (or the NVRTC error) in 'log'. Needs no GPU. */
int ltf_cuda_fused_compile(const char *src, const char *arch, char **image, size_t *size, char *log, size_t loglen);
/* Run group 'f' on the CUDA device of 'ctx' (the plan executor calls it
** for a group whose tensors are on the GPU, as cpu/fused.c's
** ltf_cpu_fused_run on the CPU): 'ext' as planned, 'out' allocated with
** f->numel elements of f->dtype (it may be one of the inputs). Compiles
** the group's kernel for the device on first use (cached by source text);
** an ltf_status, with the message in ctx. Exported for dlsym as
** "ltf_cuda_fused_run". */
int ltf_cuda_fused_run(struct ltf_ctx *ctx, const struct ltf_fused *f, struct ltf_tensor *const *ext, int next,
                       struct ltf_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
