/* bert.c - BERT encoders (post-LN), the layout and names of the PyTorch
 * engine's model (engine/pytorch/matrix_torch_models.py), so weights files
 * interchange:
 *
 *   x = dropout(emb_norm(word[ids] + position[t] + token_type[types]))
 *   per layer: a = attention(query(x), key(x), value(x))   (dropout 0.1 on
 *              the probabilities), x = attn_norm(x + dropout(attn_out(a)))
 *              x = ffn_norm(x + dropout(ffn_out(gelu(ffn_in(x)))))  (erf GELU)
 *   MLM head (HF BertForMaskedLM's): at M = ceil(0.15 T) masked positions
 *   of each sequence (distinct, drawn per sequence; 20 of 128, 77 of 512),
 *   h = mlm.norm(gelu(mlm.transform(x[b, pos[b, j]]))),
 *   logits = h word^T + mlm.decoder.bias   (the decoder is the word table)
 *   loss = softmax cross-entropy against a token id per masked position,
 *   the mean over the B M positions; training with AdamW (lr 1e-4, weight
 *   decay 0.01). Logits exist at the masked positions only, in training and
 *   inference alike (as NVIDIA's BERT pre-training gathers them): the
 *   unmasked positions add nothing to the loss or a gradient.
 *
 * LayerNorm eps 1e-12, 30522-token vocabulary, 512 positions, 2 token types;
 * weights N(0, 0.02), biases 0. Dropout is active unless --eval on. */
#include "config.h"
#include "models.h"

#include <stdio.h>
#include <string.h>

typedef struct bert_config {
    int layers;       /* encoder layers */
    int hidden;       /* C */
    int heads;        /* H, head size C / H */
    int intermediate; /* FFN width */
    int vocab;        /* 30522 */
    int positions;    /* 512 */
    int types;        /* 2 */
} bert_config;

typedef struct bert_layer_params {
    int query_w, query_b; /* (C, C), (C) */
    int key_w, key_b;     /* (C, C), (C) */
    int value_w, value_b; /* (C, C), (C) */
    int attn_out_w;       /* (C, C) */
    int ffn_in_w;         /* (FF, C) */
    int ffn_out_w;        /* (C, FF) */
} bert_layer_params;      /* (declared through layer_linear; listed for the shapes) */

static const bert_config bert_tiny_cfg = {2, 128, 2, 512, 30522, 512, 2};
static const bert_config bert_base_cfg = {12, 768, 12, 3072, 30522, 512, 2};
static const bert_config bert_large_cfg = {24, 1024, 16, 4096, 30522, 512, 2};

#define BERT_P 0.1f

static op *bert_op(graph *g, int type, const char *name)
{
    op *o;
    graph_op(g, type, name, &o);
    g->nfwd = g->nops;
    return o;
}

static int bert_attention(graph *g, const char *name, int q, int k, int v, int B, int T,
                          int heads, int drop)
{
    char n[2 * GRAPH_NAME];
    tensor qs = g->t[q];
    int64_t ps[4] = {B, heads, T, T};
    int y = graph_tensor(g, name, TK_ACT, DT_F32, LAYOUT_ROW, 2, qs.shape);
    snprintf(n, sizeof n, "%.70s.probs", name);
    int probs = graph_tensor(g, n, TK_ACT, DT_F32, LAYOUT_ROW, 4, ps);
    int mask = -1;
    if (drop) {
        snprintf(n, sizeof n, "%.70s.mask", name);
        mask = graph_tensor(g, n, TK_ACT, DT_F32, LAYOUT_ROW, 4, ps);
    }
    op *o = bert_op(g, OP_ATTENTION, name);
    o->in[0] = q;
    o->in[1] = k;
    o->in[2] = v;
    o->out[0] = y;
    o->out[1] = probs;
    o->out[2] = mask;
    o->heads = heads;
    o->p = BERT_P;
    o->seed = (uint64_t)(g->nops * 7919 + 17);
    o->flops = 4.0 * B * T * T * qs.shape[1]; /* q k^T and p v */
    return y;
}

static int bert_build(const bert_config *c, graph *g, const point *pt, model_info *info,
                      char *err, int errlen)
{
    int B = pt->batch, T = pt->seq_len, C = c->hidden, drop = !pt->eval;
    char n[2 * GRAPH_NAME], m[2 * GRAPH_NAME];
    if (T > c->positions) {
        snprintf(err, errlen, "--seq-len %d exceeds BERT's %d positions", T, c->positions);
        return -1;
    }
    int M = (15 * T + 99) / 100; /* ceil(0.15 T): masked positions per sequence */
    int64_t bt[2] = {B, T}, bm[2] = {B, M}, r1 = (int64_t)B * M;
    int ids = graph_tensor(g, "input_ids", TK_INPUT, DT_I32, LAYOUT_ROW, 2, bt);
    g->t[ids].init = INIT_LABELS;
    g->t[ids].init_a = c->vocab;
    int types = graph_tensor(g, "token_type_ids", TK_INPUT, DT_I32, LAYOUT_ROW, 2, bt);
    g->t[types].init = INIT_LABELS;
    g->t[types].init_a = c->types;
    int mpos = graph_tensor(g, "mlm_positions", TK_INPUT, DT_I32, LAYOUT_ROW, 2, bm);
    g->t[mpos].init = INIT_POSITIONS;
    g->t[mpos].init_a = T;
    int target = graph_tensor(g, "target", TK_INPUT, DT_I32, LAYOUT_ROW, 1, &r1);
    g->t[target].init = INIT_LABELS;
    g->t[target].init_a = c->vocab;

    int word = layer_param(g, "word.weight", TK_PARAM, INIT_NORMAL, 0.02f, 2, (int64_t)c->vocab, (int64_t)C);
    int pos = layer_param(g, "position.weight", TK_PARAM, INIT_NORMAL, 0.02f, 2, (int64_t)c->positions, (int64_t)C);
    int typ = layer_param(g, "token_type.weight", TK_PARAM, INIT_NORMAL, 0.02f, 2, (int64_t)c->types, (int64_t)C);
    int x = graph_t2(g, "embeddings", TK_ACT, (int64_t)B * T, C);
    op *o = bert_op(g, OP_EMBED, "embeddings");
    o->in[0] = ids; o->in[1] = types; o->in[2] = word; o->in[3] = pos; o->in[4] = typ;
    o->out[0] = x;
    x = layer_layernorm(g, "emb_norm", x, 1e-12f);
    if (drop)
        x = layer_dropout(g, "emb_drop", x, BERT_P, 0);
    for (int l = 0; l < c->layers; l++) {
#define N(s) (snprintf(n, sizeof n, "layers.%d.%s", l, s), n)
        int q = layer_linear(g, N("attention.query"), x, C, 1, 1, 0.02f);
        int k = layer_linear(g, N("attention.key"), x, C, 1, 1, 0.02f);
        int v = layer_linear(g, N("attention.value"), x, C, 1, 1, 0.02f);
        int a = bert_attention(g, N("attention"), q, k, v, B, T, c->heads, drop);
        a = layer_linear(g, N("attn_out"), a, C, 1, 1, 0.02f);
        if (drop)
            a = layer_dropout(g, N("attn_drop"), a, BERT_P, 0);
        snprintf(m, sizeof m, "layers.%d.attn_add", l);
        x = layer_add(g, m, a, x);
        x = layer_layernorm(g, N("attn_norm"), x, 1e-12f);
        int h = layer_linear(g, N("ffn_in"), x, c->intermediate, 1, 1, 0.02f);
        h = layer_act(g, N("ffn_gelu"), h, ACT_GELU);
        h = layer_linear(g, N("ffn_out"), h, C, 1, 1, 0.02f);
        if (drop)
            h = layer_dropout(g, N("ffn_drop"), h, BERT_P, 0);
        snprintf(m, sizeof m, "layers.%d.ffn_add", l);
        x = layer_add(g, m, h, x);
        x = layer_layernorm(g, N("ffn_norm"), x, 1e-12f);
#undef N
    }
    x = layer_gather(g, "mlm.gather", x, mpos);
    x = layer_linear(g, "mlm.transform", x, C, 1, 1, 0.02f);
    x = layer_act(g, "mlm.gelu", x, ACT_GELU);
    x = layer_layernorm(g, "mlm.norm", x, 1e-12f);
    x = layer_linear_tied(g, "mlm.decoder", x, word);
    g->output = x;
    if (pt->train)
        g->loss = layer_softmax_ce(g, "loss", x, target);

    info->input_desc = "token ids, token types and masked positions";
    info->uses_channels_last = 0;
    info->uses_seq_len = 1;
    info->optim = (optim_cfg){.adamw = 1, .lr = 1e-4f, .wd = 0.01f, .beta1 = 0.9f,
                              .beta2 = 0.999f, .eps = 1e-8f};
    return 0;
}

int bert_tiny_build(graph *g, const point *pt, model_info *info, char *err, int errlen)
{
    return bert_build(&bert_tiny_cfg, g, pt, info, err, errlen);
}

int bert_base_build(graph *g, const point *pt, model_info *info, char *err, int errlen)
{
    return bert_build(&bert_base_cfg, g, pt, info, err, errlen);
}

int bert_large_build(graph *g, const point *pt, model_info *info, char *err, int errlen)
{
    return bert_build(&bert_large_cfg, g, pt, info, err, errlen);
}
