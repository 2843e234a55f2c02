"""torch.nn: Module, Parameter, layers, losses, `functional` and `init`."""
from . import functional, init  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .modules import (Module, Identity, Linear, ReLU, Tanh, Sigmoid, Softmax,  # noqa: F401
                      LogSoftmax, Flatten, Unflatten, Sequential, ModuleList, MSELoss, L1Loss,
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
                      Embedding, EmbeddingBag, MultiheadAttention, CTCLoss,
                      MultiLabelMarginLoss, PairwiseDistance, CosineSimilarity)
from .modules import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,  # noqa: F401
                      ConvTranspose3d, MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d,
                      AvgPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
                      AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, LPPool1d,
                      LPPool2d, LPPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, Fold, Unfold,
                      PixelShuffle, PixelUnshuffle, Upsample, UpsamplingNearest2d,
                      UpsamplingBilinear2d, ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d,
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      CircularPad1d, CircularPad2d, CircularPad3d)
from .modules import ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .modules import (RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell,  # noqa: F401
                      GRUCell, TransformerEncoderLayer, TransformerDecoderLayer,
                      TransformerEncoder, TransformerDecoder, Transformer)
from . import utils  # noqa: F401
