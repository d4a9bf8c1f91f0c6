/* engine.h - one benchmark point: the settings main.c parses from flags. */
#ifndef MATRIX_ENGINE_ENGINE_H
#define MATRIX_ENGINE_ENGINE_H

#include <stdint.h>

enum precision { PREC_FP32, PREC_TF32, PREC_FP16, PREC_BF16, PREC_INT8 };
enum runtime { RUNTIME_EAGER, RUNTIME_INDUCTOR, RUNTIME_ONNXRUNTIME, RUNTIME_TENSORRT };
enum compile_mode { COMPILE_NONE, COMPILE_DEFAULT, COMPILE_REDUCE_OVERHEAD, COMPILE_MAX_AUTOTUNE };
enum device { DEV_AUTO, DEV_CPU, DEV_CUDA };

typedef struct point {
    const char *model;
    int train;          /* --task train */
    int batch;          /* samples per step */
    int seq_len;        /* tokens per sample (BERT) */
    int image_size;     /* pixels per side (ResNet; 0: the model's own) */
    int precision;      /* enum precision */
    int channels_last;
    int cudnn_benchmark;
    int eval;
    int inference_mode;
    int compile;        /* enum compile_mode */
    int runtime;        /* enum runtime: the PyTorch engine's; here eager only */
    int quant;          /* int8 quantization: 0 dynamic, 1 static (PyTorch engine) */
    int syncbn;
    int ema;
    int gpus;
    int threads;
    int device;         /* enum device */
    const char *plan_cache; /* --plan-cache DIR|off; NULL: not given (plancache_dir) */
    uint64_t seed;
} point;

#endif
