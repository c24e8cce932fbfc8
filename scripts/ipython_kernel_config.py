# Installed by `make venv` into .venv/etc/ipython/ (a config directory every IPython kernel of this venv reads).
# It drops two log lines of the kernels that execute the chapters (jupyter-book, nbmake, tests/test_chapters.py),
# and nothing else:
# - "Kernel is running over TCP without encryption": the kernels are started by jupyter_client over TCP on
#   127.0.0.1, authenticated by a per-kernel HMAC key; ipykernel ≥ 7 says so once per chapter — noise locally.
# - "KeyboardInterrupt caught in kernel": when a notebook has finished, nbclient shuts its kernel down, and
#   jupyter_client's KernelManager.shutdown_kernel *interrupts* the kernel first (SIGINT, to stop any running code;
#   manager.py `_async_shutdown_kernel`) before sending shutdown_request. If that SIGINT lands while the idle kernel
#   is inside a message handler (ipykernel's kernelbase.dispatch_shell), ipykernel logs it at ERROR level. It is the
#   shutdown's own interrupt, after every cell has run; a real interrupt of a running cell is still reported by the
#   cell (as a KeyboardInterrupt traceback in its output), which this filter does not touch.
import logging

_DROP = ("without encryption", "KeyboardInterrupt caught in kernel")


class _DropShutdownNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        return not any(s in msg for s in _DROP)


logging.getLogger("IPKernelApp").addFilter(_DropShutdownNoise())
