"""torch.nn: Module, Parameter, layers, losses, `functional` and `init`."""
from . import functional, init  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .modules import (Module, Identity, Linear, ReLU, Tanh, Sigmoid, Softmax,  # noqa: F401
                      LogSoftmax, Flatten, Sequential, ModuleList, MSELoss, L1Loss,
                      SmoothL1Loss, NLLLoss, CrossEntropyLoss)
