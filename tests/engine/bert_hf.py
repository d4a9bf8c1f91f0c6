"""bert_hf.py - the native engine's BERT against Hugging Face transformers'
BertForMaskedLM (issue 16): the same weights (HF's names mapped to ours, the
decoder tied to the word table in both), the engine's inputs (token ids,
token types, masked positions and their target ids from its dump; HF's
labels are -100 except at the masked positions, so its mean over labelled
tokens is our mean over the B M masked positions).

Checked on bert_tiny, fp32, dropout off (eval on, and HF's dropout
probabilities 0): the MLM logits at the masked positions, the loss, every
parameter's gradient at step 1 and the loss over 5 AdamW steps (training),
and the logits of inference; each against HF in fp64 and fp32 (the closer
one counts), relative to the largest magnitude, at 1e-4 (gradients: per
tensor, floored at 1e-3 of the largest gradient).

Arguments are added to every engine command: `--device cuda` checks the CUDA
backend (tests/cudasim/bert_hf.sh: on the CPU simulator; on a GPU, the
tolerances hold for fp32 there too).

Needs transformers (pip: tests/install-deps.sh installs it); without it:
SKIP (77)."""
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxw  # noqa: E402

try:
    import transformers
    from transformers import BertConfig, BertForMaskedLM
except Exception as e:  # noqa: BLE001 - any import failure means no transformers here
    print("SKIP: transformers cannot be imported (%s: %s); pip install transformers" % (type(e).__name__, e))
    sys.exit(77)

LAYERS, C, H, FF = 2, 128, 2, 512


def hf_model(dtype):
    cfg = BertConfig(vocab_size=30522, hidden_size=C, num_hidden_layers=LAYERS, num_attention_heads=H,
                     intermediate_size=FF, hidden_act="gelu", hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, max_position_embeddings=512, type_vocab_size=2,
                     layer_norm_eps=1e-12, tie_word_embeddings=True)
    if hasattr(cfg, "_attn_implementation"):  # transformers >= 4.36: the plain softmax(QK^T)V
        cfg._attn_implementation = "eager"
    return BertForMaskedLM(cfg).to(dtype)


def our_name(k):
    """HF's parameter name -> the engine's (None: not a parameter of ours)."""
    rules = [("bert.embeddings.word_embeddings.", "word."), ("bert.embeddings.position_embeddings.", "position."),
             ("bert.embeddings.token_type_embeddings.", "token_type."), ("bert.embeddings.LayerNorm.", "emb_norm."),
             ("cls.predictions.transform.dense.", "mlm.transform."),
             ("cls.predictions.transform.LayerNorm.", "mlm.norm."), ("cls.predictions.bias", "mlm.decoder.bias")]
    for a, b in rules:
        if k.startswith(a):
            return b + k[len(a):]
    if k.startswith("bert.encoder.layer."):
        i, rest = k[len("bert.encoder.layer."):].split(".", 1)
        for a, b in [("attention.self.", "attention."), ("attention.output.dense.", "attn_out."),
                     ("attention.output.LayerNorm.", "attn_norm."), ("intermediate.dense.", "ffn_in."),
                     ("output.dense.", "ffn_out."), ("output.LayerNorm.", "ffn_norm.")]:
            if rest.startswith(a):
                return "layers.%s.%s%s" % (i, b, rest[len(a):])
    return None  # the decoder's weight (tied: the word table), its bias (the same tensor as cls.predictions.bias)


def hf_params(m):
    """Our name -> HF's parameter, each tensor once."""
    out = {}
    for k, p in m.named_parameters():
        n = our_name(k)
        if n is not None and n not in out:
            out[n] = p
    return out


def labels_of(d, B, T):
    pos, t = d["mlm_positions"].long(), d["target"].long().reshape(B, -1)
    lab = torch.full((B, T), -100, dtype=torch.long)
    lab.scatter_(1, pos, t)
    return lab


def masked_logits(logits, pos):
    return torch.gather(logits, 1, pos[..., None].expand(-1, -1, logits.shape[-1])).reshape(-1, logits.shape[-1])


def run_hf(state, d, steps, dtype, B, T, lr, train):
    m = hf_model(dtype)
    ps = hf_params(m)
    with torch.no_grad():
        for n, p in ps.items():
            p.copy_(state[n].to(dtype))
    pos = d["mlm_positions"].long()
    ids, types = d["input_ids"].long(), d["token_type_ids"].long()
    r = {"losses": []}
    if not train:
        m.eval()
        with torch.no_grad():
            out = m(input_ids=ids, token_type_ids=types, attention_mask=torch.ones_like(ids))
        r["output"] = masked_logits(out.logits, pos).double()
        return r
    m.train()
    opt = torch.optim.AdamW(list(ps.values()), lr=lr, weight_decay=0.01)
    lab = labels_of(d, B, T)
    for s in range(1, steps + 1):
        opt.zero_grad()
        out = m(input_ids=ids, token_type_ids=types, attention_mask=torch.ones_like(ids), labels=lab)
        out.loss.backward()
        if s == 1:
            r["output"] = masked_logits(out.logits, pos).detach().double()
            for n, p in ps.items():
                r["grad." + n] = p.grad.detach().clone().double()
        r["losses"].append(out.loss.item())
        opt.step()
    r["losses"] = torch.tensor(r["losses"], dtype=torch.float64)
    return r


def rel(a, b, floor):
    return ((a.double().reshape(b.shape) - b).abs().max() / max(b.abs().max().item(), floor)).item()


def main():
    extra = sys.argv[1:]
    torch.manual_seed(1)
    chk = mxw.Checker()
    print("transformers %s, torch %s; engine arguments added: %s" % (transformers.__version__, torch.__version__,
                                                                   " ".join(extra) or "none"))
    src = hf_model(torch.float32)
    with torch.no_grad():  # non-zero biases and LayerNorm affines, so their gradients matter
        for k, p in src.named_parameters():
            if k.endswith("bias") or "LayerNorm" in k:
                p.add_(torch.randn_like(p) * 0.02)
    state = {n: p.detach().clone() for n, p in hf_params(src).items()}
    work = mxw.tmpdir()
    wfile = os.path.join(work, "w.mxw")
    mxw.save(wfile, state)
    B, T, steps, lr = 3, 16, 5, 1e-3
    dump = os.path.join(work, "d.mxw")
    p = mxw.engine("--model", "bert_tiny", "--task", "train", "--batch", B, "--seq-len", T, "--threads", 2,
                   "--eval", "on", "--weights", wfile, "--steps", steps, "--lr", lr, "--dump", dump, *extra)
    cuda = "--device" in extra and extra[extra.index("--device") + 1] == "cuda"
    said = "matrix-engine: cuda:" in p.stderr  # the CUDA backend's log lines (a dump has no result record)
    chk.true("the engine ran on %s" % ("cuda" if cuda else "the CPU"), said == cuda,
             "(CUDA backend lines on stderr: %s)" % ("yes" if said else "none"))
    d = mxw.load(dump)
    M = d["mlm_positions"].shape[1]
    chk.true("3 masked positions of 16 per sequence, distinct", M == 3 and all(
        len(set(row.tolist())) == M for row in d["mlm_positions"]), "(%s)" % d["mlm_positions"].tolist())
    r64 = run_hf(state, d, steps, torch.float64, B, T, lr, True)
    r32 = run_hf(state, d, steps, torch.float32, B, T, lr, True)
    gkeys = sorted(k for k in r64 if k.startswith("grad."))
    ours = sorted(k for k in d if k.startswith("grad."))
    chk.true("the engine's parameters are BertForMaskedLM's, one for one", ours == gkeys,
             "(%d of ours, %d of HF; only ours: %s; only HF's: %s)" % (len(ours), len(gkeys), sorted(set(ours) - set(gkeys)),
                                                                        sorted(set(gkeys) - set(ours))))
    for what, keys in (("MLM logits at the masked positions", ["output"]), ("loss over 5 AdamW steps", ["losses"]),
                       ("every parameter's gradient", gkeys)):
        gmax = max(r64[k].abs().max().item() for k in keys)
        worst, wk = max((rel(d[k], r64[k], 1e-3 * gmax), k) for k in keys)
        vs32 = max(rel(d[k], r32[k], 1e-3 * gmax) for k in keys)
        chk.true("bert_tiny train vs BertForMaskedLM: %s (%d tensors)" % (what, len(keys)),
                 worst <= 1e-4 or vs32 <= 1e-4,
                 "worst relative maxdiff %.3e (%s) vs fp64, %.3e vs fp32, tolerance 1e-04" % (worst, wk, vs32))
    chk.true("bert_tiny train: the loss starts near ln(30522) = 10.33", abs(r64["losses"][0].item() - 10.33) < 0.5,
             "(%.3f)" % r64["losses"][0].item())
    for im in ("off", "on"):
        mxw.engine("--model", "bert_tiny", "--task", "infer", "--batch", B, "--seq-len", T, "--eval", "on",
                   "--inference-mode", im, "--weights", wfile, "--threads", 2, "--dump", dump, *extra)
        d = mxw.load(dump)
        ref = run_hf(state, d, 0, torch.float64, B, T, lr, False)
        chk.close("bert_tiny infer inference_mode=%s vs BertForMaskedLM: logits" % im, d["output"], ref["output"])
    shutil.rmtree(work)
    return chk.verdict()


if __name__ == "__main__":
    sys.exit(main())
