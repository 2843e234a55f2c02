"""torch.utils.data: datasets, samplers, default collation and the DataLoader."""
from .dataset import (Dataset, IterableDataset, TensorDataset, ConcatDataset,  # noqa: F401
                      ChainDataset, Subset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,  # noqa: F401
                      WeightedRandomSampler, BatchSampler)
from .collate import default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader, get_worker_info  # noqa: F401
