"""nn modules, one file per family as in torch.nn.modules."""
from .module import Module  # noqa: F401
from .linear import Identity, Linear  # noqa: F401
from .activation import ReLU, Tanh, Sigmoid, Softmax, LogSoftmax  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .container import Sequential, ModuleList  # noqa: F401
from .loss import MSELoss, L1Loss, SmoothL1Loss, NLLLoss, CrossEntropyLoss  # noqa: F401
# normalisation, dropout, embeddings, activations, losses (nnfunc14)
from .linear import Bilinear  # noqa: F401
from .activation import (Softmin, Softmax2d, SiLU, Mish, SELU, Hardswish, Hardsigmoid,  # noqa: F401
                         GELU, ELU, CELU, LeakyReLU, PReLU, RReLU, Hardtanh, ReLU6, Softplus,
                         Softsign, Tanhshrink, LogSigmoid, Hardshrink, Softshrink, Threshold,
                         GLU)
from .loss import (HuberLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss, PoissonNLLLoss,  # noqa: F401
                   GaussianNLLLoss, MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss,
                   SoftMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, TripletMarginLoss,
                   TripletMarginWithDistanceLoss, CTCLoss, MultiLabelMarginLoss)
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,  # noqa: F401
                            InstanceNorm2d, InstanceNorm3d, LayerNorm, RMSNorm, GroupNorm,
                            LocalResponseNorm)
from .dropout import (Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout,  # noqa: F401
                      FeatureAlphaDropout)
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,  # noqa: F401
                   ConvTranspose3d)
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d,  # noqa: F401
                      AvgPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
                      AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, LPPool1d,
                      LPPool2d, LPPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .fold import Fold, Unfold  # noqa: F401
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401
from .padding import (ZeroPad1d, ZeroPad2d, ZeroPad3d, ConstantPad1d,  # noqa: F401
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      CircularPad1d, CircularPad2d, CircularPad3d)
from .transformer import MultiheadAttention  # noqa: F401
from .container import ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell  # noqa: F401
from .transformer import (TransformerEncoderLayer, TransformerDecoderLayer,  # noqa: F401
                          TransformerEncoder, TransformerDecoder, Transformer)
from .distance import PairwiseDistance, CosineSimilarity  # noqa: F401
