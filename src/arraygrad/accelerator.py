"""torch.accelerator: which accelerator scripts should use. None here: arraygrad runs on the cpu
until a GPU backend is installed."""

__all__ = ["is_available", "current_accelerator", "device_count"]


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0
