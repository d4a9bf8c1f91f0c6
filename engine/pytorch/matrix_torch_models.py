"""Models of the PyTorch engine (matrix_torch.py).

Every model is built from plain torch (torchvision only for ResNet-18/50), with
random weights, and comes with its synthetic input and loss:

  mnist_cnn    the MNIST CNN of the seed study 004 (Koehler's "MNIST handwritten
               digit recognition in PyTorch"): conv 1->10 k5, max-pool 2, ReLU,
               conv 10->20 k5, Dropout2d, max-pool 2, ReLU, linear 320->50, ReLU,
               dropout, linear 50->10, log_softmax; NLL loss; 1x28x28 inputs.
               Only change: x.view(-1, 320) is torch.flatten(x, 1), which is the
               same on contiguous tensors and also works on channels-last ones.
  resnet18     torchvision.models.resnet18(weights=None), 3x224x224, 1000 classes
  resnet50     torchvision.models.resnet50(weights=None) (v1.5: stride on the 3x3)
  resnet_tiny  a CIFAR-style small ResNet: conv3x3 3->16 + BN + ReLU (no max-pool),
               four stages of one BasicBlock each (as torchvision's), widths 16/32/64/128,
               strides 1/2/2/2, global average pool, linear 128->10; 3x32x32.
  bert_base    post-LN BERT encoder, 12 layers, hidden 768, 12 heads, FFN 3072
  bert_large   24 layers, hidden 1024, 16 heads, FFN 4096
  bert_tiny    2 layers, hidden 128, 2 heads, FFN 512
               BERT: embeddings word 30522 + position 512 + token type 2, summed,
               LayerNorm (eps 1e-12), dropout 0.1; each layer: self-attention
               (Q, K, V, output projections; softmax(QK^T/sqrt(d)) with dropout 0.1
               on the probabilities), dropout, residual, LayerNorm; FFN with exact
               (erf) GELU, dropout, residual, LayerNorm. Head: HF BertForMaskedLM's
               at ceil(0.15 seq_len) masked positions per sequence (dense, GELU,
               LayerNorm, the word table as decoder, a bias); cross-entropy
               against a token id per masked position.
               Attention: torch.nn.functional.scaled_dot_product_attention where
               torch has it (>= 2.0), else the explicit matmul/softmax/matmul.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CNN_MODELS = ("mnist_cnn", "resnet18", "resnet50", "resnet_tiny")
BERT_MODELS = ("bert_tiny", "bert_base", "bert_large")
MODELS = CNN_MODELS + BERT_MODELS

DESCRIPTIONS = {
    "mnist_cnn": "MNIST CNN of seed 004 (2 conv + 2 linear, dropout), 1x28x28, NLL loss",
    "resnet18": "torchvision ResNet-18, weights=None, 3x224x224, 1000 classes",
    "resnet50": "torchvision ResNet-50 (v1.5), weights=None, 3x224x224, 1000 classes",
    "resnet_tiny": "small ResNet: BasicBlock x [1,1,1,1], widths 16-128, 3x32x32, 10 classes",
    "bert_tiny": "post-LN BERT, 2 layers, hidden 128, 2 heads, FFN 512, MLM head (tied decoder) at 15% of positions",
    "bert_base": "post-LN BERT, 12 layers, hidden 768, 12 heads, FFN 3072, MLM head (tied decoder) at 15% of positions",
    "bert_large": "post-LN BERT, 24 layers, hidden 1024, 16 heads, FFN 4096, MLM head (tied decoder) at 15% of positions",
}

BERT_CONFIGS = {
    # layers, hidden, heads, intermediate
    "bert_tiny": (2, 128, 2, 512),
    "bert_base": (12, 768, 12, 3072),
    "bert_large": (24, 1024, 16, 4096),
}
BERT_VOCAB = 30522
BERT_MAX_POSITIONS = 512
BERT_TYPES = 2
BERT_LN_EPS = 1e-12
BERT_DROPOUT = 0.1


class MnistCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


class BasicBlock(nn.Module):
    """torchvision's BasicBlock (two 3x3 conv + BN, ReLU after the residual add),
    written out so that resnet_tiny does not need torchvision."""

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNetTiny(nn.Module):
    def __init__(self, widths=(16, 32, 64, 128), blocks=(1, 1, 1, 1), classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        layers = []
        inplanes = widths[0]
        for i, (w, n) in enumerate(zip(widths, blocks)):
            stride = 1 if i == 0 else 2
            stage = []
            for j in range(n):
                s = stride if j == 0 else 1
                down = None
                if s != 1 or inplanes != w:
                    down = nn.Sequential(nn.Conv2d(inplanes, w, 1, stride=s, bias=False), nn.BatchNorm2d(w))
                stage.append(BasicBlock(inplanes, w, stride=s, downsample=down))
                inplanes = w
            layers.append(nn.Sequential(*stage))
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(inplanes, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads, use_sdpa):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(BERT_DROPOUT)
        self.use_sdpa = use_sdpa

    def _split(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        if self.use_sdpa:
            ctx = F.scaled_dot_product_attention(q, k, v, dropout_p=BERT_DROPOUT if self.training else 0.0)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            probs = self.dropout(F.softmax(scores, dim=-1))
            ctx = torch.matmul(probs, v)
        return ctx.transpose(1, 2).reshape(b, s, h)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate, use_sdpa):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads, use_sdpa)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_drop = nn.Dropout(BERT_DROPOUT)
        self.attn_norm = nn.LayerNorm(hidden, eps=BERT_LN_EPS)
        self.ffn_in = nn.Linear(hidden, intermediate)
        self.ffn_out = nn.Linear(intermediate, hidden)
        self.ffn_drop = nn.Dropout(BERT_DROPOUT)
        self.ffn_norm = nn.LayerNorm(hidden, eps=BERT_LN_EPS)

    def forward(self, x):
        x = self.attn_norm(x + self.attn_drop(self.attn_out(self.attention(x))))
        y = self.ffn_out(F.gelu(self.ffn_in(x)))  # exact (erf) GELU
        return self.ffn_norm(x + self.ffn_drop(y))


def bert_masked(seq_len):
    """Masked positions per sequence: ceil(0.15 seq_len), as the native engine
    (engine/models/bert.c): 20 of 128, 77 of 512."""
    return (15 * seq_len + 99) // 100


class Bert(nn.Module):
    """BERT with HF BertForMaskedLM's head: at the masked positions,
    dense + GELU + LayerNorm, then the word table (tied) and a bias; logits
    only at the masked positions (B * M rows), as NVIDIA's pre-training
    gathers them."""

    def __init__(self, layers, hidden, heads, intermediate, use_sdpa=None):
        super().__init__()
        if use_sdpa is None:
            use_sdpa = hasattr(F, "scaled_dot_product_attention")
        self.use_sdpa = use_sdpa
        self.word = nn.Embedding(BERT_VOCAB, hidden)
        self.position = nn.Embedding(BERT_MAX_POSITIONS, hidden)
        self.token_type = nn.Embedding(BERT_TYPES, hidden)
        self.emb_norm = nn.LayerNorm(hidden, eps=BERT_LN_EPS)
        self.emb_drop = nn.Dropout(BERT_DROPOUT)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, intermediate, use_sdpa) for _ in range(layers))
        self.mlm = nn.Module()
        self.mlm.transform = nn.Linear(hidden, hidden)
        self.mlm.norm = nn.LayerNorm(hidden, eps=BERT_LN_EPS)
        self.mlm.decoder = nn.Linear(hidden, BERT_VOCAB)  # an nn.Linear: int8 quantizes it, the FLOPs hook counts it
        self.mlm.decoder.weight = self.word.weight  # tied, as HF's: one parameter
        self.config = (layers, hidden, heads, intermediate)
        # BERT's initialisation: N(0, 0.02) weights, zero biases, unit LayerNorm
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, inputs):
        ids, types, masked = inputs[0], inputs[1], inputs[2]
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.word(ids) + self.position(pos)[None] + self.token_type(types)
        x = self.emb_drop(self.emb_norm(x))
        for layer in self.layers:
            x = layer(x)
        x = torch.gather(x, 1, masked[..., None].expand(-1, -1, x.shape[-1]))
        h = F.gelu(self.mlm.transform(x))
        # autocast on the CPU (torch 1.13) leaves LayerNorm out of its casts:
        # a bf16 input with f32 weights fails; CUDA's autocast runs LayerNorm
        # in f32 anyway, so this cast changes nothing there
        if h.dtype != self.mlm.norm.weight.dtype:
            h = h.to(self.mlm.norm.weight.dtype)
        h = self.mlm.norm(h)
        return self.mlm.decoder(h).reshape(-1, BERT_VOCAB)

    def attention_flops(self, batch, seq):
        """FLOPs of the two attention matmuls (QK^T and PV), forward, all layers."""
        layers, hidden, heads, _ = self.config
        return layers * 2 * (2 * batch * seq * seq * hidden)


def build(name):
    """The model called name (random weights), on the CPU, in fp32."""
    if name == "mnist_cnn":
        return MnistCnn()
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18(weights=None)
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None)
    if name == "resnet_tiny":
        return ResNetTiny()
    if name in BERT_CONFIGS:
        return Bert(*BERT_CONFIGS[name])
    raise ValueError("unknown model %r" % name)


def is_cnn(name):
    return name in CNN_MODELS


def make_inputs(name, batch, seq_len, device, generator=None):
    """Synthetic random inputs and targets generated on device (never zeros):
    images ~ N(0, 1), class labels uniform, token ids uniform over the vocabulary,
    token types uniform over {0, 1}; BERT's ceil(0.15 seq_len) masked positions
    per sequence distinct and uniform, their targets uniform token ids."""
    kw = dict(device=device, generator=generator)
    if name == "mnist_cnn":
        return torch.randn(batch, 1, 28, 28, **kw), torch.randint(0, 10, (batch,), **kw)
    if name in ("resnet18", "resnet50"):
        return torch.randn(batch, 3, 224, 224, **kw), torch.randint(0, 1000, (batch,), **kw)
    if name == "resnet_tiny":
        return torch.randn(batch, 3, 32, 32, **kw), torch.randint(0, 10, (batch,), **kw)
    if name in BERT_CONFIGS:
        ids = torch.randint(1, BERT_VOCAB, (batch, seq_len), **kw)
        types = torch.randint(0, BERT_TYPES, (batch, seq_len), **kw)
        m = bert_masked(seq_len)
        # M distinct positions per sequence, ascending; a token id to predict at each
        masked = torch.rand(batch, seq_len, **kw).argsort(dim=1)[:, :m].sort(dim=1).values
        return (ids, types, masked), torch.randint(0, BERT_VOCAB, (batch * m,), **kw)
    raise ValueError("unknown model %r" % name)


def loss_fn(name):
    if name == "mnist_cnn":
        return F.nll_loss  # the model ends in log_softmax
    return F.cross_entropy


def count_flops(model, name, sample_input, batch):
    """Forward FLOPs for one step of `batch` samples, counted on one forward pass
    of sample_input (batch 1) with hooks: 2*MACs of every Conv2d and Linear, plus
    the attention matmuls of BERT. BatchNorm, activations, pooling, softmax,
    LayerNorm, embeddings and the optimizer are not counted. Returns
    (flops, first_conv) where first_conv is (input, output) of the first Conv2d
    that ran (None for models without one)."""
    total = [0]
    first = [None]

    def conv_hook(m, inp, out):
        k = m.in_channels // m.groups
        for s in m.kernel_size:
            k *= s
        total[0] += 2 * out.numel() * k
        if first[0] is None:
            first[0] = (inp[0], out)

    def linear_hook(m, inp, out):
        total[0] += 2 * out.numel() * m.in_features

    handles = []
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            handles.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            handles.append(m.register_forward_hook(linear_hook))
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            model(sample_input)
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()
    flops = total[0]
    if isinstance(model, Bert):
        flops += model.attention_flops(1, sample_input[0].shape[1])
    return flops * batch, first[0]
