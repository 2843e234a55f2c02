"""nn modules, one file per family as in torch.nn.modules."""
from .module import Module  # noqa: F401
from .linear import Identity, Linear  # noqa: F401
from .activation import ReLU, Tanh, Sigmoid, Softmax, LogSoftmax  # noqa: F401
from .flatten import Flatten  # noqa: F401
from .container import Sequential, ModuleList  # noqa: F401
from .loss import MSELoss, L1Loss, SmoothL1Loss, NLLLoss, CrossEntropyLoss  # noqa: F401
