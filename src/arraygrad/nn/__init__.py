"""torch.nn: Module, Parameter, layers, losses, `functional` and `init`."""
from . import functional, init  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .module import Module  # noqa: F401
from .layers import (Identity, Linear, ReLU, Tanh, Sigmoid, Softmax, LogSoftmax,  # noqa: F401
                     Flatten, Sequential, ModuleList, MSELoss, L1Loss, SmoothL1Loss, NLLLoss,
                     CrossEntropyLoss)
