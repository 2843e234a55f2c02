"""torch.nn: Module, Parameter, layers, losses, `functional` and `init`."""
from . import functional, init  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .modules import (Module, Identity, Linear, ReLU, Tanh, Sigmoid, Softmax,  # noqa: F401
                      LogSoftmax, Flatten, Sequential, ModuleList, MSELoss, L1Loss,
                      SmoothL1Loss, NLLLoss, CrossEntropyLoss)
from .modules import (Bilinear, Softmin, Softmax2d, SiLU, Mish, SELU, Hardswish,  # noqa: F401
                      Hardsigmoid, GELU, ELU, CELU, LeakyReLU, PReLU, RReLU, Hardtanh, ReLU6,
                      Softplus, Softsign, Tanhshrink, LogSigmoid, Hardshrink, Softshrink,
                      Threshold, GLU, HuberLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss,
                      PoissonNLLLoss, GaussianNLLLoss, MarginRankingLoss, HingeEmbeddingLoss,
                      CosineEmbeddingLoss, SoftMarginLoss, MultiLabelSoftMarginLoss,
                      MultiMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss,
                      BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d,
                      InstanceNorm3d, LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm, Dropout,
                      Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout,
                      Embedding, EmbeddingBag)
