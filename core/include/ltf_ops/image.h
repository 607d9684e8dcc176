/*
** ltf_ops/image.h: image resizing (ORDER OP within the family). Images are
** NHWC (rank 4; tf.image.resize adds and drops the batch dimension of a
** single image). Sampling follows TensorFlow 2's tf.image.resize
** (half_pixel_centers, no align_corners, no antialiasing).
**
**   op                     inputs                 attributes / output
**   resize_bilinear        images (float)         ints = {height, width}: (n, height, width, c)
**   resize_bilinear_grad   grads, original        grads (n, h', w', c) spread back onto
**                                                 original's shape (the op's adjoint)
**   resize_nearest         images (not string)    ints = {height, width}
**   resize_nearest_grad    grads, original        grads summed back onto original's shape
**   image_transform        images, transforms     ints = {height, width}, i[0] interpolation (0 nearest,
**                          (float32 (n|1, 8))     1 bilinear), i[1] fill mode (0 reflect, 1 wrap,
**                                                 2 constant, 3 nearest), f[0] fill value:
**                                                 (n, height, width, c), TensorFlow's
**                                                 ImageProjectiveTransformV3; no gradient
*/
#ifndef LTF_OPS_IMAGE_H
#define LTF_OPS_IMAGE_H

#define LTF_OPS_IMAGE(X)                                                   \
    X(RESIZE_BILINEAR, resize_bilinear) X(RESIZE_BILINEAR_GRAD, resize_bilinear_grad) \
    X(RESIZE_NEAREST, resize_nearest) X(RESIZE_NEAREST_GRAD, resize_nearest_grad) \
    X(IMAGE_TRANSFORM, image_transform)

#endif
