/* cudnngraph.cc - the part of cuDNN's graph (backend) API that
 * engine/cuda/dnngraph.cu, convgraph.cu and sdpa.cu call, simulated on the
 * CPU with its documented meaning, so that the GPU's default paths for
 * convolutions (conv + bias + residual + ReLU as one graph, conv + GEN_STATS)
 * and attention (cuDNN's unified SDPA node, the composite forward and
 * backward graphs) run without a GPU: descriptors and their attributes,
 * finalization, the heuristics' engine configs, engines, knobs and notes,
 * execution plans with workspaces, variant packs and execution.
 *
 * Descriptors keep what is set on them; cudnnBackendFinalize checks what
 * cuDNN checks (every required attribute, of its type; shapes that make
 * the operation; one producer per virtual tensor) and copies what later
 * steps need, so destroying a descriptor after it was used is harmless, as
 * in cuDNN. An attribute given in another type than cuDNN takes, or one this
 * file does not know, is refused with a line on stderr.
 *
 * Execution interprets the operation graph: every operation in dependency
 * order, virtual tensors in host memory rounded to their type, the others
 * in the variant pack's device memory. The operations:
 *
 *   CONVOLUTION_FORWARD  y = alpha conv(x, w) (+ beta y), cross-correlation,
 *                        any strides of 4-D x, w, y, padding, filter stride
 *   POINTWISE            ADD SUB MUL DIV EXP LOG RELU_FWD IDENTITY, operands
 *                        broadcast where their dimension is 1
 *   GEN_STATS            per-channel sum and sum of squares (SUM_SQSUM)
 *   MATMUL               C = A B over the last two dimensions, batched
 *   REDUCTION            ADD or MAX over the dimensions where y is 1
 *   RESHAPE              y's elements are x's memory read with y's strides
 *                        (the transposes of the composite graphs)
 *   SDPA_FWD             O = softmax(scale Q K^T) V, Stats = log-sum-exp
 *                        (P rounded to the io type before P V, as flash does)
 *
 * Engines (CUDNN_ATTR_ENGINE_GLOBAL_INDEX), each a way to compute the same
 * graph with the notes cuDNN would attach:
 *
 *   0  convolution, FMA, no notes, no workspace
 *   1  convolution, TENSOR_CORE (+ DOWN_CONVERT_INPUTS with f32 data: reads
 *      f32 inputs as TF32), knob TILE_SIZE 0 or 1 (another order of the
 *      sums), workspace 64 KiB / 1 MiB
 *   2  convolution with or without GEN_STATS, RUNTIME_COMPILATION, 4 KiB
 *   3  convolution, GEN_STATS too, NONDETERMINISTIC
 *   4  convolution with 16-bit data, REDUCED_PRECISION_REDUCTION
 *   5  convolution, 8 GiB of workspace (above every cap)
 *   8  the unified SDPA_FWD node
 *   9  composite graphs (matmul, pointwise, reduction, reshape), 1 KiB
 *  10  the unified SDPA_BWD node: offered, its plan never finalizes (as on
 *      SM80 / SM90 in released cuDNN)
 *
 * Heuristics: mode A 4, 1 (tile 0), 3, 1 (tile 1), 5, 2, 0; mode B 2, 0,
 * 1 (tile 1); FALLBACK 0; only the engines that take the graph.
 *
 * Faults and time on demand:
 *   CUDASIM_DNNG_WRONG=ids|all    those engines' results are wrong in the
 *                                 last element of every tensor the graph
 *                                 outputs (CUDASIM_DNNG_WRONG_UID=u: only
 *                                 that tensor's)
 *   CUDASIM_DNNG_DELAY="id=ms,.." each execution of those engines takes
 *                                 that much device time
 *
 * What this does not show: whether real cuDNN has an engine for a graph
 * (every graph of these operations runs here), or its speed. It shows
 * that the graphs mean what the engine thinks they mean, and that the
 * engine's plumbing around them (heuristics, notes, plan cache, checks,
 * variant packs, workspace) does what it says. */
#include "cudasim.h"

#include <cudnn.h>

#include "simlib.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

namespace dnnsim {
cudaStream_t stream_of(cudnnHandle_t h); /* cudnn.cc */
}

namespace {

const uint64_t GMAGIC = 0x6475646e67726131ull; /* "dudngra1" */

/* ---- attributes ------------------------------------------------------------------------- */

struct Attr {
    cudnnBackendAttributeType_t t;
    int64_t n;
    std::vector<unsigned char> b;
};

size_t type_size(cudnnBackendAttributeType_t t)
{
    switch (t) {
    case CUDNN_TYPE_INT64: return 8;
    case CUDNN_TYPE_DOUBLE: return 8;
    case CUDNN_TYPE_FLOAT: return 4;
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(void *);
    default: return sizeof(int); /* the enums */
    }
}

/* The type cuDNN takes for each attribute this file knows (0: unknown). */
struct AttrType {
    cudnnBackendAttributeName_t a;
    cudnnBackendAttributeType_t t;
};

#define A_(n, t) {CUDNN_ATTR_##n, CUDNN_TYPE_##t}
const AttrType ATTR_TYPES[] = {
    A_(TENSOR_DATA_TYPE, DATA_TYPE), A_(TENSOR_DIMENSIONS, INT64), A_(TENSOR_STRIDES, INT64),
    A_(TENSOR_UNIQUE_ID, INT64), A_(TENSOR_BYTE_ALIGNMENT, INT64), A_(TENSOR_IS_BY_VALUE, BOOLEAN),
    A_(TENSOR_IS_VIRTUAL, BOOLEAN),
    A_(POINTWISE_MODE, POINTWISE_MODE), A_(POINTWISE_MATH_PREC, DATA_TYPE),
    A_(CONVOLUTION_COMP_TYPE, DATA_TYPE), A_(CONVOLUTION_CONV_MODE, CONVOLUTION_MODE),
    A_(CONVOLUTION_SPATIAL_DIMS, INT64), A_(CONVOLUTION_DILATIONS, INT64),
    A_(CONVOLUTION_FILTER_STRIDES, INT64), A_(CONVOLUTION_PRE_PADDINGS, INT64),
    A_(CONVOLUTION_POST_PADDINGS, INT64),
    A_(MATMUL_COMP_TYPE, DATA_TYPE),
    A_(REDUCTION_OPERATOR, REDUCTION_OPERATOR_TYPE), A_(REDUCTION_COMP_TYPE, DATA_TYPE),
    A_(OPERATION_CONVOLUTION_FORWARD_X, BACKEND_DESCRIPTOR),
    A_(OPERATION_CONVOLUTION_FORWARD_W, BACKEND_DESCRIPTOR),
    A_(OPERATION_CONVOLUTION_FORWARD_Y, BACKEND_DESCRIPTOR),
    A_(OPERATION_CONVOLUTION_FORWARD_CONV_DESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_CONVOLUTION_FORWARD_ALPHA, FLOAT), A_(OPERATION_CONVOLUTION_FORWARD_BETA, FLOAT),
    A_(OPERATION_POINTWISE_PW_DESCRIPTOR, BACKEND_DESCRIPTOR),
    A_(OPERATION_POINTWISE_XDESC, BACKEND_DESCRIPTOR), A_(OPERATION_POINTWISE_BDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_POINTWISE_YDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_GENSTATS_MODE, GENSTATS_MODE), A_(OPERATION_GENSTATS_MATH_PREC, DATA_TYPE),
    A_(OPERATION_GENSTATS_XDESC, BACKEND_DESCRIPTOR), A_(OPERATION_GENSTATS_SUMDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_GENSTATS_SQSUMDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_MATMUL_ADESC, BACKEND_DESCRIPTOR), A_(OPERATION_MATMUL_BDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_MATMUL_CDESC, BACKEND_DESCRIPTOR), A_(OPERATION_MATMUL_DESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_REDUCTION_XDESC, BACKEND_DESCRIPTOR), A_(OPERATION_REDUCTION_YDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_REDUCTION_DESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_RESHAPE_XDESC, BACKEND_DESCRIPTOR), A_(OPERATION_RESHAPE_YDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_FWD_QDESC, BACKEND_DESCRIPTOR), A_(OPERATION_SDPA_FWD_KDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_FWD_VDESC, BACKEND_DESCRIPTOR), A_(OPERATION_SDPA_FWD_ODESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_FWD_STATSDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_FWD_SCALEDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_BWD_QDESC, BACKEND_DESCRIPTOR), A_(OPERATION_SDPA_BWD_KDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_BWD_VDESC, BACKEND_DESCRIPTOR), A_(OPERATION_SDPA_BWD_ODESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_BWD_STATSDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_BWD_SCALEDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_BWD_DODDESC, BACKEND_DESCRIPTOR), A_(OPERATION_SDPA_BWD_DQDESC, BACKEND_DESCRIPTOR),
    A_(OPERATION_SDPA_BWD_DKDESC, BACKEND_DESCRIPTOR), A_(OPERATION_SDPA_BWD_DVDESC, BACKEND_DESCRIPTOR),
    A_(OPERATIONGRAPH_HANDLE, HANDLE), A_(OPERATIONGRAPH_OPS, BACKEND_DESCRIPTOR),
    A_(ENGINEHEUR_MODE, HEUR_MODE), A_(ENGINEHEUR_OPERATION_GRAPH, BACKEND_DESCRIPTOR),
    A_(ENGINEHEUR_RESULTS, BACKEND_DESCRIPTOR),
    A_(ENGINECFG_ENGINE, BACKEND_DESCRIPTOR), A_(ENGINECFG_KNOB_CHOICES, BACKEND_DESCRIPTOR),
    A_(ENGINE_OPERATION_GRAPH, BACKEND_DESCRIPTOR), A_(ENGINE_GLOBAL_INDEX, INT64),
    A_(ENGINE_NUMERICAL_NOTE, NUMERICAL_NOTE), A_(ENGINE_BEHAVIOR_NOTE, BEHAVIOR_NOTE),
    A_(KNOB_CHOICE_KNOB_TYPE, KNOB_TYPE), A_(KNOB_CHOICE_KNOB_VALUE, INT64),
    A_(EXECUTION_PLAN_HANDLE, HANDLE), A_(EXECUTION_PLAN_ENGINE_CONFIG, BACKEND_DESCRIPTOR),
    A_(EXECUTION_PLAN_WORKSPACE_SIZE, INT64),
    A_(VARIANT_PACK_UNIQUE_IDS, INT64), A_(VARIANT_PACK_DATA_POINTERS, VOID_PTR),
    A_(VARIANT_PACK_WORKSPACE, VOID_PTR),
};
#undef A_

int attr_type(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t *t)
{
    for (const AttrType &x : ATTR_TYPES)
        if (x.a == a) {
            *t = x.t;
            return 1;
        }
    return 0;
}

cudnnStatus_t loud(cudnnStatus_t st, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
cudnnStatus_t loud(cudnnStatus_t st, const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cudasim: %s: ", call);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return st;
}

/* ---- the graph ---------------------------------------------------------------------------- */

struct Tensor {
    int64_t uid = 0;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    int64_t dim[4] = {0, 0, 0, 0}, str[4] = {0, 0, 0, 0};
    int64_t align = 0;
    bool virt = false, byval = false;
};

int kind_of(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT ? simlib::F32 : t == CUDNN_DATA_HALF ? simlib::F16 : simlib::BF16;
}
size_t esize(cudnnDataType_t t) { return t == CUDNN_DATA_FLOAT ? 4 : 2; }
int64_t count(const Tensor &t) { return t.dim[0] * t.dim[1] * t.dim[2] * t.dim[3]; }
int64_t span(const Tensor &t)
{
    int64_t s = 1;
    for (int i = 0; i < 4; i++)
        s += (t.dim[i] - 1) * t.str[i];
    return s;
}
bool same_dims(const Tensor &a, const Tensor &b) { return !memcmp(a.dim, b.dim, sizeof a.dim); }

enum OpKind { OP_CONV, OP_PW, OP_GENSTATS, OP_MATMUL, OP_REDUCE, OP_RESHAPE, OP_SDPA_FWD, OP_SDPA_BWD };

struct Op {
    OpKind k;
    std::vector<Tensor> in, out; /* conv: x w / y; pw: x [b] / y; genstats: x / sum sqsum;
                                  * matmul: a b / c; reduce, reshape: x / y;
                                  * sdpa fwd: q k v scale / o stats;
                                  * sdpa bwd: q k v o do stats scale / dq dk dv */
    int64_t pad[2] = {0, 0}, post[2] = {0, 0}, stride[2] = {1, 1};
    float alpha = 1.0f, beta = 0.0f;
    cudnnPointwiseMode_t pw = CUDNN_POINTWISE_ADD;
    cudnnReduceTensorOp_t red = CUDNN_REDUCE_TENSOR_ADD;
};

enum { G_CONV = 1, G_CONV_STATS = 2, G_SDPA_FWD = 4, G_SDPA_BWD = 8, G_COMPOSITE = 16 };

struct Graph {
    std::vector<Op> ops;          /* in dependency order */
    std::map<int64_t, Tensor> t;  /* every tensor by uid */
    std::vector<int64_t> outputs; /* in memory and read by no operation: what a fault spoils */
    int cls = 0;                  /* G_* */
    bool f32 = false;             /* the convolution's data is f32 */
};

/* ---- descriptors ------------------------------------------------------------------------- */

struct Desc {
    uint64_t magic = GMAGIC;
    cudnnBackendDescriptorType_t type;
    bool fin = false;
    std::map<int, Attr> a;
    /* what finalization made */
    Tensor tensor;
    std::shared_ptr<Op> op;
    std::shared_ptr<Graph> graph;             /* graph, heuristics, engine, config, plan */
    int64_t engine = -1;                      /* engine, config, plan */
    std::vector<std::pair<int64_t, int64_t>> knobs; /* config, plan; a knob choice: one */
    int64_t ws = 0;                           /* plan */
    std::vector<std::pair<int64_t, std::vector<std::pair<int64_t, int64_t>>>> results; /* heuristics */
    std::vector<int64_t> uids;                /* variant pack */
    std::vector<void *> ptrs;
    void *wsp = nullptr;
};

Desc *D_(cudnnBackendDescriptor_t d)
{
    Desc *x = reinterpret_cast<Desc *>(d);
    return x && x->magic == GMAGIC ? x : nullptr;
}

const Attr *get(const Desc *d, cudnnBackendAttributeName_t a) {
    auto it = d->a.find((int)a);
    return it == d->a.end() ? nullptr : &it->second;
}

template <class T> bool scalar(const Desc *d, cudnnBackendAttributeName_t a, T *v)
{
    const Attr *x = get(d, a);
    if (!x || x->n != 1 || x->b.size() != sizeof(T))
        return false;
    memcpy(v, x->b.data(), sizeof(T));
    return true;
}

bool ints(const Desc *d, cudnnBackendAttributeName_t a, int64_t *v, int64_t n)
{
    const Attr *x = get(d, a);
    if (!x || x->n != n)
        return false;
    memcpy(v, x->b.data(), (size_t)n * 8);
    return true;
}

/* a finalized descriptor of type t set as attribute a of d, or null */
Desc *sub(const Desc *d, cudnnBackendAttributeName_t a, cudnnBackendDescriptorType_t t)
{
    void *p;
    if (!scalar(d, a, &p))
        return nullptr;
    Desc *x = D_(p);
    return x && x->fin && x->type == t ? x : nullptr;
}

const char *FIN = "cudnnBackendFinalize";

/* ---- engines ----------------------------------------------------------------------------- */

struct Config {
    int64_t engine;
    std::vector<std::pair<int64_t, int64_t>> knobs;
};

bool takes(int64_t e, const Graph &g)
{
    bool sixteen = !g.f32;
    switch (e) {
    case 0: case 1: case 5: return g.cls == G_CONV;
    case 2: case 3: return g.cls == G_CONV || g.cls == G_CONV_STATS;
    case 4: return g.cls == G_CONV && sixteen;
    case 8: return g.cls == G_SDPA_FWD;
    case 9: return g.cls == G_COMPOSITE;
    case 10: return g.cls == G_SDPA_BWD;
    default: return false;
    }
}

std::vector<int> numerical(int64_t e, const Graph &g)
{
    if (e == 1)
        return g.f32 ? std::vector<int>{CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS}
                     : std::vector<int>{CUDNN_NUMERICAL_NOTE_TENSOR_CORE};
    if (e == 3)
        return {CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC};
    if (e == 4)
        return {CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION};
    if (e == 8 || e == 9 || e == 10)
        return {CUDNN_NUMERICAL_NOTE_TENSOR_CORE};
    return {};
}

std::vector<int> behavior(int64_t e)
{
    if (e == 2)
        return {CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION};
    return {};
}

/* the knobs an engine has, and whether a choice is one of its values */
bool knobs_ok(int64_t e, const std::vector<std::pair<int64_t, int64_t>> &k)
{
    if (e != 1)
        return k.empty();
    return k.size() == 1 && k[0].first == CUDNN_KNOB_TYPE_TILE_SIZE && (k[0].second == 0 || k[0].second == 1);
}

int64_t workspace(int64_t e, const std::vector<std::pair<int64_t, int64_t>> &k)
{
    switch (e) {
    case 1: return k.size() == 1 && k[0].second == 1 ? (int64_t)1 << 20 : (int64_t)64 << 10;
    case 2: return 4096;
    case 5: return (int64_t)8 << 30;
    case 9: return 1024;
    default: return 0;
    }
}

std::vector<Config> heuristics(cudnnBackendHeurMode_t mode, const Graph &g)
{
    typedef std::vector<std::pair<int64_t, int64_t>> K;
    K t0{{CUDNN_KNOB_TYPE_TILE_SIZE, 0}}, t1{{CUDNN_KNOB_TYPE_TILE_SIZE, 1}};
    std::vector<Config> all;
    if (mode == CUDNN_HEUR_MODE_A || mode == CUDNN_HEUR_MODE_INSTANT)
        all = {{4, {}}, {1, t0}, {3, {}}, {1, t1}, {5, {}}, {2, {}}, {0, {}}, {8, {}}, {9, {}}, {10, {}}};
    else if (mode == CUDNN_HEUR_MODE_B)
        all = {{2, {}}, {0, {}}, {1, t1}, {8, {}}, {9, {}}};
    else if (mode == CUDNN_HEUR_MODE_FALLBACK)
        all = {{0, {}}};
    std::vector<Config> r;
    for (const Config &c : all)
        if (takes(c.engine, g))
            r.push_back(c);
    return r;
}

/* CUDASIM_DNNG_WRONG: the engine computes a wrong result */
bool wrong(int64_t e) { return simlib::listed(getenv("CUDASIM_DNNG_WRONG"), (long)e) != 0; }

double delay_ms(int64_t e) { return simlib::delay_ms("CUDASIM_DNNG_DELAY", (long)e); }

/* ---- finalization ------------------------------------------------------------------------ */

cudnnStatus_t fin_tensor(Desc *d)
{
    Tensor &t = d->tensor;
    if (!scalar(d, CUDNN_ATTR_TENSOR_DATA_TYPE, &t.dt) || !scalar(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, &t.uid) ||
        !scalar(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, &t.align))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "a tensor without its type, unique id or byte alignment");
    const Attr *dims = get(d, CUDNN_ATTR_TENSOR_DIMENSIONS), *strs = get(d, CUDNN_ATTR_TENSOR_STRIDES);
    if (!dims || !strs || dims->n != strs->n)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "tensor %lld: dimensions and strides missing or of "
                    "different lengths", (long long)t.uid);
    if (dims->n != 4)
        return loud(CUDNN_STATUS_NOT_SUPPORTED, FIN, "tensor %lld: %lld dimensions (cudasim: 4 only)",
                    (long long)t.uid, (long long)dims->n);
    ints(d, CUDNN_ATTR_TENSOR_DIMENSIONS, t.dim, 4);
    ints(d, CUDNN_ATTR_TENSOR_STRIDES, t.str, 4);
    for (int i = 0; i < 4; i++)
        if (t.dim[i] < 1 || t.str[i] < 1)
            return loud(CUDNN_STATUS_BAD_PARAM, FIN, "tensor %lld: dimension %d is %lld, stride %lld",
                        (long long)t.uid, i, (long long)t.dim[i], (long long)t.str[i]);
    if (t.dt != CUDNN_DATA_FLOAT && t.dt != CUDNN_DATA_HALF && t.dt != CUDNN_DATA_BFLOAT16)
        return loud(CUDNN_STATUS_NOT_SUPPORTED, FIN, "tensor %lld: data type %d (cudasim: FLOAT, HALF, "
                    "BFLOAT16)", (long long)t.uid, (int)t.dt);
    if (t.align < 1 || (t.align & (t.align - 1)))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "tensor %lld: byte alignment %lld", (long long)t.uid,
                    (long long)t.align);
    bool b = false;
    if (scalar(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, &b))
        t.virt = b;
    b = false;
    if (scalar(d, CUDNN_ATTR_TENSOR_IS_BY_VALUE, &b))
        t.byval = b;
    if (t.virt && t.byval)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "tensor %lld: virtual and by value", (long long)t.uid);
    return CUDNN_STATUS_SUCCESS;
}

/* the tensor set as attribute a of d (finalized), into out */
bool tensor_of(const Desc *d, cudnnBackendAttributeName_t a, std::vector<Tensor> &out)
{
    Desc *t = sub(d, a, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    if (!t)
        return false;
    out.push_back(t->tensor);
    return true;
}

cudnnStatus_t fin_conv_op(Desc *d, Op &o)
{
    Desc *cd = sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    if (!cd || !tensor_of(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, o.in) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, o.in) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, o.out))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "a convolution without finalized x, w, y or convolution "
                    "descriptor");
    if (!scalar(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, &o.alpha) ||
        !scalar(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, &o.beta))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "a convolution without alpha or beta");
    int64_t dil[2], sd = 0;
    cudnnConvolutionMode_t mode;
    scalar(cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE, &mode);
    scalar(cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, &sd);
    ints(cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, dil, 2);
    ints(cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, o.stride, 2);
    ints(cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, o.pad, 2);
    ints(cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, o.post, 2);
    if (mode != CUDNN_CROSS_CORRELATION || dil[0] != 1 || dil[1] != 1)
        return loud(CUDNN_STATUS_NOT_SUPPORTED, FIN, "cudasim: cross-correlation without dilation only");
    const Tensor &x = o.in[0], &w = o.in[1], &y = o.out[0];
    int64_t oh = (x.dim[2] + o.pad[0] + o.post[0] - w.dim[2]) / o.stride[0] + 1;
    int64_t ow = (x.dim[3] + o.pad[1] + o.post[1] - w.dim[3]) / o.stride[1] + 1;
    if (x.dim[1] != w.dim[1] || y.dim[0] != x.dim[0] || y.dim[1] != w.dim[0] || y.dim[2] != oh || y.dim[3] != ow)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN,
                    "convolution: x (%lld, %lld, %lld, %lld), w (%lld, %lld, %lld, %lld) make y (%lld, %lld, "
                    "%lld, %lld), given (%lld, %lld, %lld, %lld)",
                    (long long)x.dim[0], (long long)x.dim[1], (long long)x.dim[2], (long long)x.dim[3],
                    (long long)w.dim[0], (long long)w.dim[1], (long long)w.dim[2], (long long)w.dim[3],
                    (long long)x.dim[0], (long long)w.dim[0], (long long)oh, (long long)ow, (long long)y.dim[0],
                    (long long)y.dim[1], (long long)y.dim[2], (long long)y.dim[3]);
    return CUDNN_STATUS_SUCCESS;
}

/* b broadcasts to y: each dimension equal or 1 */
bool bcast(const Tensor &b, const Tensor &y)
{
    for (int i = 0; i < 4; i++)
        if (b.dim[i] != y.dim[i] && b.dim[i] != 1)
            return false;
    return true;
}

cudnnStatus_t fin_pw_op(Desc *d, Op &o)
{
    Desc *pd = sub(d, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    if (!pd || !tensor_of(d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, o.in) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, o.out))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "a pointwise operation without finalized x, y or mode");
    scalar(pd, CUDNN_ATTR_POINTWISE_MODE, &o.pw);
    bool two = o.pw == CUDNN_POINTWISE_ADD || o.pw == CUDNN_POINTWISE_SUB || o.pw == CUDNN_POINTWISE_MUL ||
               o.pw == CUDNN_POINTWISE_DIV;
    bool one = o.pw == CUDNN_POINTWISE_EXP || o.pw == CUDNN_POINTWISE_LOG || o.pw == CUDNN_POINTWISE_RELU_FWD ||
               o.pw == CUDNN_POINTWISE_IDENTITY;
    if (!two && !one)
        return loud(CUDNN_STATUS_NOT_SUPPORTED, FIN, "cudasim: pointwise mode %d not simulated", (int)o.pw);
    bool hasb = tensor_of(d, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, o.in);
    if (two != hasb)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "pointwise mode %d %s a b operand", (int)o.pw,
                    two ? "needs" : "takes no");
    for (const Tensor &t : o.in)
        if (!bcast(t, o.out[0]))
            return loud(CUDNN_STATUS_BAD_PARAM, FIN, "pointwise: operand %lld does not broadcast to y %lld",
                        (long long)t.uid, (long long)o.out[0].uid);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_genstats_op(Desc *d, Op &o)
{
    cudnnGenStatsMode_t mode;
    if (!scalar(d, CUDNN_ATTR_OPERATION_GENSTATS_MODE, &mode) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, o.in) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, o.out) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, o.out))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "GEN_STATS without its mode, x, sum or sqsum");
    if (mode != CUDNN_GENSTATS_SUM_SQSUM)
        return loud(CUDNN_STATUS_NOT_SUPPORTED, FIN, "GEN_STATS mode %d", (int)mode);
    for (const Tensor &s : o.out)
        if (s.dim[0] != 1 || s.dim[1] != o.in[0].dim[1] || s.dim[2] != 1 || s.dim[3] != 1 ||
            s.dt != CUDNN_DATA_FLOAT)
            return loud(CUDNN_STATUS_BAD_PARAM, FIN, "GEN_STATS: sum %lld is not FLOAT (1, %lld, 1, 1)",
                        (long long)s.uid, (long long)o.in[0].dim[1]);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_matmul_op(Desc *d, Op &o)
{
    if (!sub(d, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_BACKEND_MATMUL_DESCRIPTOR) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_MATMUL_ADESC, o.in) || !tensor_of(d, CUDNN_ATTR_OPERATION_MATMUL_BDESC, o.in) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_MATMUL_CDESC, o.out))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "a matmul without finalized a, b, c or descriptor");
    const Tensor &a = o.in[0], &b = o.in[1], &c = o.out[0];
    bool ok = a.dim[2] == c.dim[2] && b.dim[3] == c.dim[3] && a.dim[3] == b.dim[2];
    for (int i = 0; i < 2; i++)
        ok = ok && (a.dim[i] == c.dim[i] || a.dim[i] == 1) && (b.dim[i] == c.dim[i] || b.dim[i] == 1);
    if (!ok)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "matmul: a %lld (.., %lld, %lld) b %lld (.., %lld, %lld) c %lld "
                    "(.., %lld, %lld) do not make a product", (long long)a.uid, (long long)a.dim[2],
                    (long long)a.dim[3], (long long)b.uid, (long long)b.dim[2], (long long)b.dim[3],
                    (long long)c.uid, (long long)c.dim[2], (long long)c.dim[3]);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_reduce_op(Desc *d, Op &o)
{
    Desc *rd = sub(d, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    if (!rd || !tensor_of(d, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, o.in) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, o.out))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "a reduction without finalized x, y or descriptor");
    scalar(rd, CUDNN_ATTR_REDUCTION_OPERATOR, &o.red);
    if (o.red != CUDNN_REDUCE_TENSOR_ADD && o.red != CUDNN_REDUCE_TENSOR_MAX)
        return loud(CUDNN_STATUS_NOT_SUPPORTED, FIN, "cudasim: reduction %d not simulated", (int)o.red);
    if (!bcast(o.out[0], o.in[0]))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "reduction: y %lld is not x %lld with dimensions of 1",
                    (long long)o.out[0].uid, (long long)o.in[0].uid);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_reshape_op(Desc *d, Op &o)
{
    if (!tensor_of(d, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, o.in) ||
        !tensor_of(d, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, o.out))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "a reshape without finalized x or y");
    if (count(o.in[0]) != count(o.out[0]) || span(o.in[0]) != span(o.out[0]))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "reshape: x %lld and y %lld differ in size",
                    (long long)o.in[0].uid, (long long)o.out[0].uid);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_sdpa_op(Desc *d, Op &o, bool fwd)
{
    bool ok;
    if (fwd)
        ok = tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o.out) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, o.out);
    else
        ok = tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, o.in) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC, o.out) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, o.out) &&
             tensor_of(d, CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC, o.out);
    if (!ok)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "SDPA %s: a tensor missing", fwd ? "forward" : "backward");
    const Tensor &q = o.in[0], &k = o.in[1], &v = o.in[2], &sc = fwd ? o.in[3] : o.in[6];
    const Tensor &st = fwd ? o.out[1] : o.in[5];
    if (!same_dims(q, k) || !same_dims(q, v) || !same_dims(q, fwd ? o.out[0] : o.in[3]) || st.dim[0] != q.dim[0] ||
        st.dim[1] != q.dim[1] || st.dim[2] != q.dim[2] || st.dim[3] != 1 || st.dt != CUDNN_DATA_FLOAT ||
        !sc.byval || count(sc) != 1 || q.dt == CUDNN_DATA_FLOAT)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "SDPA: Q, K, V, O not of one shape in a 16-bit type, Stats not "
                    "FLOAT (B, H, T, 1), or the scale not one FLOAT by value");
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_op(Desc *d)
{
    auto o = std::make_shared<Op>();
    cudnnStatus_t st;
    switch (d->type) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR: o->k = OP_CONV; st = fin_conv_op(d, *o); break;
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: o->k = OP_PW; st = fin_pw_op(d, *o); break;
    case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR: o->k = OP_GENSTATS; st = fin_genstats_op(d, *o); break;
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: o->k = OP_MATMUL; st = fin_matmul_op(d, *o); break;
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: o->k = OP_REDUCE; st = fin_reduce_op(d, *o); break;
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR: o->k = OP_RESHAPE; st = fin_reshape_op(d, *o); break;
    case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR: o->k = OP_SDPA_FWD; st = fin_sdpa_op(d, *o, true); break;
    case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR: o->k = OP_SDPA_BWD; st = fin_sdpa_op(d, *o, false); break;
    default: return loud(CUDNN_STATUS_NOT_SUPPORTED, FIN, "cudasim: operation type %d not simulated", (int)d->type);
    }
    if (st == CUDNN_STATUS_SUCCESS)
        d->op = o;
    return st;
}

bool is_op(cudnnBackendDescriptorType_t t)
{
    switch (t) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR: return true;
    default: return false;
    }
}

/* the operation graph: tensors by uid (one descriptor each), one producer
 * per tensor, every virtual tensor produced and read, no cycle; the
 * operations in dependency order; the class the engines look at */
cudnnStatus_t fin_graph(Desc *d)
{
    const Attr *ops = get(d, CUDNN_ATTR_OPERATIONGRAPH_OPS);
    void *h = nullptr;
    if (!ops || !ops->n || !scalar(d, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, &h) || !h)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "an operation graph without its handle or operations");
    auto g = std::make_shared<Graph>();
    std::vector<Op> todo;
    std::map<int64_t, int> producer;
    for (int64_t i = 0; i < ops->n; i++) {
        void *p;
        memcpy(&p, ops->b.data() + i * sizeof p, sizeof p);
        Desc *od = D_(p);
        if (!od || !od->fin || !is_op(od->type))
            return loud(CUDNN_STATUS_BAD_PARAM, FIN, "operation graph: entry %lld is not a finalized operation",
                        (long long)i);
        todo.push_back(*od->op);
        for (const Tensor &t : od->op->out) {
            if (producer.count(t.uid))
                return loud(CUDNN_STATUS_BAD_PARAM, FIN, "operation graph: tensor %lld written by two operations",
                            (long long)t.uid);
            producer[t.uid] = (int)i;
        }
    }
    std::map<int64_t, int> readers;
    for (const Op &o : todo)
        for (const std::vector<Tensor> *v : {&o.in, &o.out})
            for (const Tensor &t : *v) {
                auto it = g->t.find(t.uid);
                if (it == g->t.end())
                    g->t[t.uid] = t;
                else if (!same_dims(it->second, t) || memcmp(it->second.str, t.str, sizeof t.str) ||
                         it->second.dt != t.dt || it->second.virt != t.virt || it->second.byval != t.byval)
                    return loud(CUDNN_STATUS_BAD_PARAM, FIN, "operation graph: uid %lld names two different "
                                "tensors", (long long)t.uid);
                if (v == &o.in)
                    readers[t.uid]++;
            }
    for (auto &kv : g->t)
        if (!kv.second.virt && !kv.second.byval && !readers.count(kv.first))
            g->outputs.push_back(kv.first);
    for (auto &kv : g->t)
        if (kv.second.virt && (!producer.count(kv.first) || !readers.count(kv.first)))
            return loud(CUDNN_STATUS_BAD_PARAM, FIN, "operation graph: virtual tensor %lld is %s",
                        (long long)kv.first, producer.count(kv.first) ? "never read" : "never written");
    /* dependency order */
    std::vector<bool> done(todo.size(), false);
    std::map<int64_t, bool> ready;
    for (size_t n = 0; n < todo.size();) {
        size_t before = n;
        for (size_t i = 0; i < todo.size(); i++) {
            if (done[i])
                continue;
            bool can = true;
            for (const Tensor &t : todo[i].in)
                can = can && (!producer.count(t.uid) || ready[t.uid]);
            if (!can)
                continue;
            g->ops.push_back(todo[i]);
            for (const Tensor &t : todo[i].out)
                ready[t.uid] = true;
            done[i] = true;
            n++;
        }
        if (n == before)
            return loud(CUDNN_STATUS_BAD_PARAM, FIN, "operation graph: a cycle");
    }
    int conv = 0, stats = 0, sdf = 0, sdb = 0, comp = 0, pw = 0;
    for (const Op &o : g->ops) {
        conv += o.k == OP_CONV;
        stats += o.k == OP_GENSTATS;
        sdf += o.k == OP_SDPA_FWD;
        sdb += o.k == OP_SDPA_BWD;
        comp += o.k == OP_MATMUL || o.k == OP_REDUCE || o.k == OP_RESHAPE;
        pw += o.k == OP_PW;
        if (o.k == OP_CONV)
            g->f32 = o.in[0].dt == CUDNN_DATA_FLOAT;
    }
    size_t n = g->ops.size();
    if (conv == 1 && g->ops[0].k == OP_CONV && !sdf && !sdb && !comp)
        g->cls = stats ? (stats == 1 && !pw ? G_CONV_STATS : 0) : G_CONV;
    else if (sdf == 1 && n == 1)
        g->cls = G_SDPA_FWD;
    else if (sdb == 1 && n == 1)
        g->cls = G_SDPA_BWD;
    else if (comp && !conv && !stats && !sdf && !sdb)
        g->cls = G_COMPOSITE;
    d->graph = g; /* a graph no engine takes still finalizes: the heuristics find none */
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_engine(Desc *d)
{
    Desc *g = sub(d, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    if (!g || !scalar(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &d->engine))
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "an engine without its operation graph or global index");
    if (!takes(d->engine, *g->graph))
        return CUDNN_STATUS_NOT_SUPPORTED; /* not an engine of this graph: no message, as cuDNN */
    d->graph = g->graph;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_config(Desc *d)
{
    Desc *e = sub(d, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    if (!e)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "an engine config without a finalized engine");
    d->graph = e->graph;
    d->engine = e->engine;
    d->knobs.clear();
    if (const Attr *k = get(d, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES))
        for (int64_t i = 0; i < k->n; i++) {
            void *p;
            memcpy(&p, k->b.data() + i * sizeof p, sizeof p);
            Desc *kd = D_(p);
            if (!kd || !kd->fin || kd->type != CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)
                return loud(CUDNN_STATUS_BAD_PARAM, FIN, "engine config: knob choice %lld not finalized",
                            (long long)i);
            d->knobs.push_back(kd->knobs[0]);
        }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_plan(Desc *d)
{
    Desc *c = sub(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    void *h = nullptr;
    if (!c || !scalar(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, &h) || !h)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "an execution plan without its handle or a finalized engine config");
    if (!knobs_ok(c->engine, c->knobs))
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (c->engine == 10)
        return CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH; /* the unified SDPA backward has no kernel here */
    d->graph = c->graph;
    d->engine = c->engine;
    d->knobs = c->knobs;
    d->ws = workspace(c->engine, c->knobs);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t fin_vpack(Desc *d)
{
    const Attr *u = get(d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS), *p = get(d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    if (!u || !p || u->n != p->n)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "a variant pack without unique ids and as many pointers");
    d->uids.assign((const int64_t *)u->b.data(), (const int64_t *)u->b.data() + u->n);
    d->ptrs.assign((void *const *)p->b.data(), (void *const *)p->b.data() + p->n);
    for (size_t i = 0; i < d->uids.size(); i++)
        for (size_t j = 0; j < i; j++)
            if (d->uids[i] == d->uids[j])
                return loud(CUDNN_STATUS_BAD_PARAM, FIN, "variant pack: uid %lld twice", (long long)d->uids[i]);
    d->wsp = nullptr;
    scalar(d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, &d->wsp);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- execution --------------------------------------------------------------------------- */

int64_t off(const Tensor &t, const int64_t *i)
{
    return i[0] * t.str[0] + i[1] * t.str[1] + i[2] * t.str[2] + i[3] * t.str[3];
}

/* A tensor's elements during one execution, by logical index: the
 * variant pack's memory (at the tensor's strides), or host floats rounded
 * to the tensor's type (virtual: dense, as a virtual tensor is never in
 * memory and its strides only say how a reshape reads it; cudnn-frontend
 * gives virtual tensors strides that overlap, e.g. its dO * O; by value:
 * one float). */
struct Buf {
    const Tensor *t = nullptr;
    char *mem = nullptr;
    std::vector<float> v;
    int64_t dense(const int64_t *i) const
    {
        return ((i[0] * t->dim[1] + i[1]) * t->dim[2] + i[2]) * t->dim[3] + i[3];
    }
    int64_t where(const int64_t *i) const
    {
        if (mem)
            return off(*t, i);
        return t->byval ? 0 : dense(i);
    }
    float at(const int64_t *i) const
    {
        int64_t k = where(i);
        return mem ? simlib::load(mem, kind_of(t->dt), (size_t)k) : v[(size_t)k];
    }
    void put(const int64_t *i, float x)
    {
        int64_t k = where(i);
        if (mem)
            simlib::store(mem, kind_of(t->dt), (size_t)k, x);
        else if (t->dt == CUDNN_DATA_FLOAT)
            v[(size_t)k] = x;
        else {
            uint16_t h;
            simlib::store(&h, kind_of(t->dt), 0, x);
            v[(size_t)k] = simlib::load(&h, kind_of(t->dt), 0);
        }
    }
};

/* index i of y as operand b (broadcast to y) reads it */
struct Bidx {
    int64_t j[4];
    Bidx(const Tensor &b, const int64_t *i)
    {
        for (int k = 0; k < 4; k++)
            j[k] = b.dim[k] == 1 ? 0 : i[k];
    }
};

template <class F> void each(const Tensor &t, F f)
{
    int64_t i[4];
    for (i[0] = 0; i[0] < t.dim[0]; i[0]++)
        for (i[1] = 0; i[1] < t.dim[1]; i[1]++)
            for (i[2] = 0; i[2] < t.dim[2]; i[2]++)
                for (i[3] = 0; i[3] < t.dim[3]; i[3]++)
                    f(i);
}

struct Run {
    int64_t engine;
    int tile;
    std::map<int64_t, Buf> b;
};

void run_conv(Run &r, const Op &o)
{
    const Tensor &xt = o.in[0], &wt = o.in[1], &yt = o.out[0];
    const Buf &x = r.b[xt.uid], &w = r.b[wt.uid];
    Buf &y = r.b[yt.uid];
    bool t32 = r.engine == 1 && xt.dt == CUDNN_DATA_FLOAT;
    int64_t C = xt.dim[1], R = wt.dim[2], S = wt.dim[3], H = xt.dim[2], W = xt.dim[3];
    /* f32 copies of x (n, c, h, w) and w (k, c, r, s), TF32 for engine 1 on f32 */
    std::vector<float> X((size_t)count(xt)), Wv((size_t)count(wt));
    size_t n = 0;
    each(xt, [&](const int64_t *i) { float f = x.at(i); X[n++] = t32 ? simlib::tf32(f) : f; });
    n = 0;
    each(wt, [&](const int64_t *i) { float f = w.at(i); Wv[n++] = t32 ? simlib::tf32(f) : f; });
    /* the sums' order by engine: 1 tile 0 r, s outer then c; 1 tile 1 two
     * halves of the channels, added; 2 c outer in blocks of 8 channels; 0 c
     * outer (simlib::conv_fwd) */
    const simlib::conv_dims d{(int)xt.dim[0], (int)C, (int)H, (int)W, (int)wt.dim[0], (int)R, (int)S,
                              (int)yt.dim[2], (int)yt.dim[3], (int)o.stride[0], (int)o.stride[1],
                              (int)o.pad[0], (int)o.pad[1]};
    std::vector<float> acc((size_t)count(yt));
    simlib::conv_fwd(d, X.data(), Wv.data(),
                     r.engine == 1 ? (r.tile == 0 ? simlib::CONV_RS_OUTER : simlib::CONV_C_HALVES)
                     : r.engine == 2 ? simlib::CONV_C_BLOCK8
                                     : simlib::CONV_C_OUTER,
                     acc.data());
    n = 0;
    each(yt, [&](const int64_t *i) {
        float v = o.alpha * acc[n++];
        if (o.beta != 0.0f)
            v += o.beta * y.at(i);
        y.put(i, v);
    });
}

float pw1(cudnnPointwiseMode_t m, float x, float b)
{
    switch (m) {
    case CUDNN_POINTWISE_ADD: return x + b;
    case CUDNN_POINTWISE_SUB: return x - b;
    case CUDNN_POINTWISE_MUL: return x * b;
    case CUDNN_POINTWISE_DIV: return x / b;
    case CUDNN_POINTWISE_EXP: return expf(x);
    case CUDNN_POINTWISE_LOG: return logf(x);
    case CUDNN_POINTWISE_RELU_FWD: return x > 0.0f ? x : 0.0f;
    default: return x; /* IDENTITY */
    }
}

/* t's elements in logical (dense row-major) order, as f32 */
std::vector<float> dense_of(const Buf &b, const Tensor &t)
{
    if (!b.mem && !t.byval)
        return b.v;
    std::vector<float> d((size_t)count(t));
    size_t n = 0;
    each(t, [&](const int64_t *i) { d[n++] = b.at(i); });
    return d;
}

/* y's dense f32 elements written into y */
void store_dense(Buf &y, const Tensor &t, const std::vector<float> &d)
{
    size_t n = 0;
    each(t, [&](const int64_t *i) { y.put(i, d[n++]); });
}

/* the dense strides of b as an operand broadcast to dims (0 where b's is 1) */
void bstrides(const Tensor &b, int64_t *s)
{
    int64_t d = 1;
    for (int k = 3; k >= 0; k--) {
        s[k] = b.dim[k] == 1 ? 0 : d;
        d *= b.dim[k];
    }
}

void run_pw(Run &r, const Op &o)
{
    const Tensor &xt = o.in[0], &yt = o.out[0];
    std::vector<float> X = dense_of(r.b[xt.uid], xt), Bv, Y((size_t)count(yt));
    int64_t xs[4], bs[4] = {0, 0, 0, 0};
    bstrides(xt, xs);
    if (o.in.size() > 1) {
        Bv = dense_of(r.b[o.in[1].uid], o.in[1]);
        bstrides(o.in[1], bs);
    }
    size_t n = 0;
    for (int64_t i0 = 0; i0 < yt.dim[0]; i0++)
        for (int64_t i1 = 0; i1 < yt.dim[1]; i1++)
            for (int64_t i2 = 0; i2 < yt.dim[2]; i2++) {
                int64_t xo = i0 * xs[0] + i1 * xs[1] + i2 * xs[2], bo = i0 * bs[0] + i1 * bs[1] + i2 * bs[2];
                for (int64_t i3 = 0; i3 < yt.dim[3]; i3++)
                    Y[n++] = pw1(o.pw, X[(size_t)(xo + i3 * xs[3])], Bv.empty() ? 0.0f : Bv[(size_t)(bo + i3 * bs[3])]);
            }
    store_dense(r.b[yt.uid], yt, Y);
}

void run_genstats(Run &r, const Op &o)
{
    const Tensor &xt = o.in[0];
    const Buf &x = r.b[xt.uid];
    std::vector<float> s((size_t)xt.dim[1], 0.0f), q((size_t)xt.dim[1], 0.0f);
    each(xt, [&](const int64_t *i) {
        float v = x.at(i);
        s[(size_t)i[1]] += v;
        q[(size_t)i[1]] += v * v;
    });
    for (int k = 0; k < 2; k++) {
        Buf &ob = r.b[o.out[k].uid];
        for (int64_t c = 0; c < xt.dim[1]; c++) {
            int64_t i[4] = {0, c, 0, 0};
            ob.put(i, k ? q[(size_t)c] : s[(size_t)c]);
        }
    }
}

void run_matmul(Run &r, const Op &o)
{
    const Tensor &at = o.in[0], &bt = o.in[1], &ct = o.out[0];
    std::vector<float> A = dense_of(r.b[at.uid], at), Bm = dense_of(r.b[bt.uid], bt), C((size_t)count(ct));
    int64_t M = ct.dim[2], N = ct.dim[3], K = at.dim[3], as[4], bs[4];
    bstrides(at, as);
    bstrides(bt, bs);
    std::vector<float> row((size_t)N);
    for (int64_t i0 = 0; i0 < ct.dim[0]; i0++)
        for (int64_t i1 = 0; i1 < ct.dim[1]; i1++) {
            const float *a = &A[(size_t)(i0 * as[0] + i1 * as[1])], *b = &Bm[(size_t)(i0 * bs[0] + i1 * bs[1])];
            float *c = &C[(size_t)(((i0 * ct.dim[1]) + i1) * M * N)];
            for (int64_t m = 0; m < M; m++) { /* each element summed over k in order */
                std::fill(row.begin(), row.end(), 0.0f);
                for (int64_t k = 0; k < K; k++) {
                    float av = a[m * K + k];
                    const float *bk = b + k * N;
                    for (int64_t n = 0; n < N; n++)
                        row[(size_t)n] += av * bk[n];
                }
                std::copy(row.begin(), row.end(), c + m * N);
            }
        }
    store_dense(r.b[ct.uid], ct, C);
}

void run_reduce(Run &r, const Op &o)
{
    const Tensor &xt = o.in[0], &yt = o.out[0];
    const Buf &x = r.b[xt.uid];
    Buf &y = r.b[yt.uid];
    Tensor dense = yt; /* the accumulators, by y's logical index */
    Buf acc;
    acc.t = &dense;
    dense.dt = CUDNN_DATA_FLOAT;
    acc.v.assign((size_t)count(yt), o.red == CUDNN_REDUCE_TENSOR_MAX ? -INFINITY : 0.0f);
    each(xt, [&](const int64_t *i) {
        Bidx j(yt, i);
        float v = x.at(i), a = acc.at(j.j);
        acc.put(j.j, o.red == CUDNN_REDUCE_TENSOR_MAX ? (v > a ? v : a) : a + v);
    });
    each(yt, [&](const int64_t *i) { y.put(i, acc.at(i)); });
}

/* y's element i is x's memory at y's offset of i: x's element whose offset
 * that is (x virtual: its strides say where each element would be) */
void run_reshape(Run &r, const Op &o)
{
    const Tensor &xt = o.in[0], &yt = o.out[0];
    const Buf &x = r.b[xt.uid];
    Buf &y = r.b[yt.uid];
    std::vector<int64_t> inv;
    if (!x.mem) {
        inv.assign((size_t)span(xt), -1);
        each(xt, [&](const int64_t *i) {
            int64_t &e = inv[(size_t)off(xt, i)];
            if (e >= 0) {
                fprintf(stderr, "cudasim: cudnnBackendExecute: reshape of virtual tensor %lld, whose strides "
                        "overlap: what it reads is not defined\n", (long long)xt.uid);
                abort();
            }
            e = x.dense(i);
        });
    }
    each(yt, [&](const int64_t *i) {
        int64_t k = off(yt, i);
        if (x.mem)
            y.put(i, simlib::load(x.mem, kind_of(xt.dt), (size_t)k));
        else
            y.put(i, x.v[(size_t)inv[(size_t)k]]);
    });
}

void run_sdpa_fwd(Run &r, const Op &o)
{
    const Tensor &qt = o.in[0], &ot = o.out[0], &stt = o.out[1];
    std::vector<float> Q = dense_of(r.b[qt.uid], qt), K = dense_of(r.b[o.in[1].uid], o.in[1]),
                       V = dense_of(r.b[o.in[2].uid], o.in[2]), O((size_t)count(ot)), St((size_t)count(stt));
    int64_t z0[4] = {0, 0, 0, 0};
    float scale = r.b[o.in[3].uid].at(z0);
    int64_t B = qt.dim[0], H = qt.dim[1], T = qt.dim[2], d = qt.dim[3];
    std::vector<float> s((size_t)T);
    for (int64_t bh = 0; bh < B * H; bh++) {
        const float *q = &Q[(size_t)(bh * T * d)], *k = &K[(size_t)(bh * T * d)], *v = &V[(size_t)(bh * T * d)];
        for (int64_t i = 0; i < T; i++) {
            float mx = -INFINITY;
            for (int64_t j = 0; j < T; j++) {
                float acc = 0.0f;
                for (int64_t e = 0; e < d; e++)
                    acc += q[i * d + e] * k[j * d + e];
                s[(size_t)j] = scale * acc;
                mx = s[(size_t)j] > mx ? s[(size_t)j] : mx;
            }
            float z = 0.0f;
            for (int64_t j = 0; j < T; j++)
                z += expf(s[(size_t)j] - mx);
            St[(size_t)(bh * T + i)] = mx + logf(z);
            for (int64_t j = 0; j < T; j++) { /* P in the io type, as flash multiplies it */
                uint16_t p16;
                simlib::store(&p16, kind_of(qt.dt), 0, expf(s[(size_t)j] - mx) / z);
                s[(size_t)j] = simlib::load(&p16, kind_of(qt.dt), 0);
            }
            float *out = &O[(size_t)((bh * T + i) * d)];
            for (int64_t e = 0; e < d; e++)
                out[e] = 0.0f;
            for (int64_t j = 0; j < T; j++)
                for (int64_t e = 0; e < d; e++)
                    out[e] += s[(size_t)j] * v[j * d + e];
        }
    }
    store_dense(r.b[ot.uid], ot, O);
    store_dense(r.b[stt.uid], stt, St);
}

/* one execution of graph g on engine e with the variant pack's pointers */
void execute(const std::shared_ptr<Graph> &g, int64_t e, int tile, const std::map<int64_t, void *> &ptr,
             const std::map<int64_t, float> &byval, void *ws, int64_t wsb)
{
    const double t0 = cudasim::now_ms();
    if (wsb > 0)
        memset(ws, 0xff, (size_t)wsb); /* scratch: what the plan leaves there is nobody's */
    Run r;
    r.engine = e;
    r.tile = tile;
    for (auto &kv : g->t) {
        Buf &b = r.b[kv.first];
        b.t = &kv.second;
        if (kv.second.byval)
            b.v.assign(1, byval.at(kv.first));
        else if (kv.second.virt)
            b.v.assign((size_t)count(kv.second), NAN);
        else
            b.mem = (char *)ptr.at(kv.first);
    }
    for (const Op &o : g->ops)
        switch (o.k) {
        case OP_CONV: run_conv(r, o); break;
        case OP_PW: run_pw(r, o); break;
        case OP_GENSTATS: run_genstats(r, o); break;
        case OP_MATMUL: run_matmul(r, o); break;
        case OP_REDUCE: run_reduce(r, o); break;
        case OP_RESHAPE: run_reshape(r, o); break;
        case OP_SDPA_FWD: run_sdpa_fwd(r, o); break;
        case OP_SDPA_BWD: abort(); /* no plan of it finalizes */
        }
    if (wrong(e)) { /* the last element of every output nothing in the graph reads */
        const char *only = getenv("CUDASIM_DNNG_WRONG_UID");
        for (int64_t u : g->outputs) {
            const Tensor &t = g->t.at(u);
            if (only && *only && atoll(only) != u)
                continue;
            int64_t last[4] = {t.dim[0] - 1, t.dim[1] - 1, t.dim[2] - 1, t.dim[3] - 1};
            Buf &b = r.b[t.uid];
            float v = b.at(last);
            b.put(last, v + 1.0f + fabsf(v));
        }
    }
    double extra = delay_ms(e);
    if (extra > 0.0)
        cudasim::advance_clock(extra - (cudasim::now_ms() - t0));
}

const char *EXE = "cudnnBackendExecute";

} // namespace

extern "C" {

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t t, cudnnBackendDescriptor_t *d)
{
    if (!d)
        return CUDNN_STATUS_BAD_PARAM;
    Desc *x = new Desc;
    x->type = t;
    *d = reinterpret_cast<cudnnBackendDescriptor_t>(x);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
    Desc *x = D_(d);
    if (!x)
        return d ? loud(CUDNN_STATUS_BAD_PARAM, "cudnnBackendDestroyDescriptor", "not a descriptor (%p)", d)
                 : CUDNN_STATUS_SUCCESS;
    x->magic = 0;
    delete x;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
                                       cudnnBackendAttributeType_t t, int64_t n, const void *v)
{
    const char *call = "cudnnBackendSetAttribute";
    Desc *x = D_(d);
    cudnnBackendAttributeType_t want;
    if (!x)
        return loud(CUDNN_STATUS_BAD_PARAM, call, "not a descriptor (%p)", d);
    if (x->fin)
        return loud(CUDNN_STATUS_BAD_PARAM, call, "attribute %d on a finalized descriptor", (int)a);
    if (!attr_type(a, &want))
        return loud(CUDNN_STATUS_NOT_SUPPORTED, call, "cudasim: attribute %d not simulated", (int)a);
    if (t != want)
        return loud(CUDNN_STATUS_BAD_PARAM, call, "attribute %d given as type %d; cuDNN takes type %d", (int)a,
                    (int)t, (int)want);
    if (n < 0 || (n > 0 && !v))
        return loud(CUDNN_STATUS_BAD_PARAM, call, "attribute %d: %lld elements at %p", (int)a, (long long)n, v);
    Attr &at = x->a[(int)a];
    at.t = t;
    at.n = n;
    at.b.assign((const unsigned char *)v, (const unsigned char *)v + (size_t)n * type_size(t));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
    Desc *x = D_(d);
    if (!x)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "not a descriptor (%p)", d);
    if (x->fin)
        return loud(CUDNN_STATUS_BAD_PARAM, FIN, "finalized twice");
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    switch (x->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR: st = fin_tensor(x); break;
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
    case CUDNN_BACKEND_MATMUL_DESCRIPTOR:
    case CUDNN_BACKEND_REDUCTION_DESCRIPTOR: break; /* read by the operation that uses it */
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: st = fin_graph(x); break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: {
        Desc *g = sub(x, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
        cudnnBackendHeurMode_t mode;
        if (!g || !scalar(x, CUDNN_ATTR_ENGINEHEUR_MODE, &mode))
            return loud(CUDNN_STATUS_BAD_PARAM, FIN, "heuristics without a finalized graph or a mode");
        x->graph = g->graph;
        for (const Config &c : heuristics(mode, *g->graph))
            x->results.push_back({c.engine, c.knobs});
        break;
    }
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: st = fin_engine(x); break;
    case CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR: {
        cudnnBackendKnobType_t kt;
        int64_t v;
        if (!scalar(x, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, &kt) || !scalar(x, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, &v))
            return loud(CUDNN_STATUS_BAD_PARAM, FIN, "a knob choice without its type or value");
        x->knobs = {{(int64_t)kt, v}};
        break;
    }
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: st = fin_config(x); break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: st = fin_plan(x); break;
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: st = fin_vpack(x); break;
    default:
        if (is_op(x->type))
            st = fin_op(x);
        else
            return loud(CUDNN_STATUS_NOT_SUPPORTED, FIN, "cudasim: descriptor type %d not simulated", (int)x->type);
    }
    if (st == CUDNN_STATUS_SUCCESS)
        x->fin = true;
    return st;
}

/* a descriptor the caller made, filled as a finalized one of type t */
static Desc *fill(void *p, cudnnBackendDescriptorType_t t)
{
    Desc *x = D_(p);
    if (!x || x->type != t)
        return nullptr;
    x->a.clear();
    x->fin = true;
    return x;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d, cudnnBackendAttributeName_t a,
                                       cudnnBackendAttributeType_t t, int64_t want, int64_t *got, void *v)
{
    const char *call = "cudnnBackendGetAttribute";
    Desc *x = D_(d);
    cudnnBackendAttributeType_t need;
    if (!x)
        return loud(CUDNN_STATUS_BAD_PARAM, call, "not a descriptor (%p)", d);
    if (!x->fin)
        return loud(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED, call, "attribute %d of a descriptor not finalized", (int)a);
    if (!attr_type(a, &need) || t != need)
        return loud(CUDNN_STATUS_BAD_PARAM, call, "attribute %d asked as type %d", (int)a, (int)t);
    int64_t n = 0;
    void **dv = (void **)v;
    switch (a) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS:
        for (size_t i = 0; i < x->results.size() && (int64_t)i < want; i++) {
            Desc *c = fill(dv[i], CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
            if (!c)
                return loud(CUDNN_STATUS_BAD_PARAM, call, "ENGINEHEUR_RESULTS: element %zu is not an engine config", i);
            c->graph = x->graph;
            c->engine = x->results[i].first;
            c->knobs = x->results[i].second;
            n++;
        }
        break;
    case CUDNN_ATTR_ENGINECFG_ENGINE: {
        Desc *e = want >= 1 ? fill(dv[0], CUDNN_BACKEND_ENGINE_DESCRIPTOR) : nullptr;
        if (!e)
            return loud(CUDNN_STATUS_BAD_PARAM, call, "ENGINECFG_ENGINE: not an engine descriptor");
        e->graph = x->graph;
        e->engine = x->engine;
        n = 1;
        break;
    }
    case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES:
        for (size_t i = 0; i < x->knobs.size() && (int64_t)i < want; i++) {
            Desc *k = fill(dv[i], CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
            if (!k)
                return loud(CUDNN_STATUS_BAD_PARAM, call, "ENGINECFG_KNOB_CHOICES: element %zu is not a knob choice", i);
            k->knobs = {x->knobs[i]};
        }
        n = (int64_t)x->knobs.size();
        break;
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
        if (want >= 1)
            *(int64_t *)v = x->engine;
        n = 1;
        break;
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE:
    case CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE: {
        std::vector<int> notes = a == CUDNN_ATTR_ENGINE_NUMERICAL_NOTE ? numerical(x->engine, *x->graph)
                                                                        : behavior(x->engine);
        for (size_t i = 0; i < notes.size() && (int64_t)i < want; i++)
            ((int *)v)[i] = notes[i];
        n = (int64_t)notes.size();
        break;
    }
    case CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE:
        if (want >= 1)
            *(int *)v = (int)x->knobs[0].first;
        n = 1;
        break;
    case CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE:
        if (want >= 1)
            *(int64_t *)v = x->knobs[0].second;
        n = 1;
        break;
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        if (want >= 1)
            *(int64_t *)v = x->ws;
        n = 1;
        break;
    default: return loud(CUDNN_STATUS_NOT_SUPPORTED, call, "cudasim: reading attribute %d not simulated", (int)a);
    }
    if (got)
        *got = n;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t vpack)
{
    Desc *p = D_(plan), *vp = D_(vpack);
    if (!p || !p->fin || p->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !vp || !vp->fin ||
        vp->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
        return loud(CUDNN_STATUS_BAD_PARAM, EXE, "not a finalized plan and variant pack");
    std::map<int64_t, void *> ptr;
    std::map<int64_t, float> byval;
    for (size_t i = 0; i < vp->uids.size(); i++)
        ptr[vp->uids[i]] = vp->ptrs[i];
    for (auto &kv : p->graph->t) {
        const Tensor &t = kv.second;
        if (t.virt)
            continue;
        auto it = ptr.find(t.uid);
        if (it == ptr.end() || !it->second)
            return loud(CUDNN_STATUS_BAD_PARAM, EXE, "tensor %lld of the graph is not in the variant pack",
                        (long long)t.uid);
        if (t.byval) {
            byval[t.uid] = *(const float *)it->second; /* read now, as cuDNN reads a host scalar */
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "tensor %lld", (long long)t.uid);
        simlib::operand(EXE, what, it->second, (size_t)span(t) * esize(t.dt), (uint32_t)t.align);
    }
    if (p->ws > 0)
        simlib::operand(EXE, "the workspace", vp->wsp, (size_t)p->ws, 16);
    std::shared_ptr<Graph> g = p->graph;
    int64_t e = p->engine, wsb = p->ws;
    int tile = p->knobs.empty() ? 0 : (int)p->knobs[0].second;
    void *ws = vp->wsp;
    cudasim::enqueue(dnnsim::stream_of(h), [=] { execute(g, e, tile, ptr, byval, ws, wsb); });
    return CUDNN_STATUS_SUCCESS;
}

} // extern "C"
